import { signal } from '@preact/signals';

/** The key lives in this tab's sessionStorage only: gone when the tab closes, never in a URL or cookie. */
const KEY_ITEM = 'switchboard.key';

/** True once the daemon answered 401: the sign-in form is shown until a key works. */
export const needsKey = signal(false);

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_ITEM);
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_ITEM);
  else sessionStorage.setItem(KEY_ITEM, key);
}

/** A daemon error answer, `{error: {code, message}}`, with its status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Request headers: the key, when there is one, as a bearer header. */
export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const key = storedKey();
  return key === null ? extra : { ...extra, authorization: `Bearer ${key}` };
}

/** fetch() on this daemon; a non-2xx answer throws its ApiError, and a 401 asks for the key. */
export async function request(path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const { json, ...rest } = init;
  const headers = authHeaders(json === undefined ? {} : { 'content-type': 'application/json' });
  const response = await fetch(path, {
    ...rest,
    headers: { ...headers, ...(rest.headers as Record<string, string> | undefined) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  if (response.ok) return response;
  const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
  if (response.status === 401) needsKey.value = true;
  throw new ApiError(response.status, body.error?.code ?? 'HTTP_' + response.status, body.error?.message ?? response.statusText);
}

export async function getJson<T>(path: string): Promise<T> {
  return (await request(path)).json() as Promise<T>;
}

export async function postJson<T>(path: string, json: unknown = {}, method = 'POST'): Promise<T> {
  return (await request(path, { method, json })).json() as Promise<T>;
}

/** The message to show for a failed action. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
