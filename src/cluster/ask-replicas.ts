import { forwardProof } from './forward-request.js';

/**
 * Asks every other live replica the same operator question (issue #43 item 2: `GET /approvals`
 * lists the held calls of the whole cluster). Each is sent the client's own key — the replica
 * checks it as this one did — and the cluster's proof that a replica sent it, so it answers for
 * itself alone and asks nobody further. A replica that does not answer in time, or answers
 * other than 200, is named in `unanswered`: what it holds is missing from the answer, not hidden.
 */

/** How long a replica may take to answer before the answer goes without it. */
const ASK_TIMEOUT_MS = 2_000;

export interface AskedReplica {
  id: string;
  url: string;
}

export interface ReplicaAnswers<T> {
  answers: Array<{ replica: string; body: T }>;
  /** The replicas whose part is missing. */
  unanswered: string[];
}

export async function askReplicas<T>(
  replicas: readonly AskedReplica[],
  request: { path: string; authorization: string | undefined },
  self: { id: string; sealKey: Buffer },
): Promise<ReplicaAnswers<T>> {
  const settled = await Promise.all(
    replicas.map(async (replica) => {
      try {
        const res = await fetch(new URL(request.path, replica.url), {
          headers: {
            ...(request.authorization !== undefined ? { authorization: request.authorization } : {}),
            ...forwardProof(self.id, self.sealKey, 'GET', request.path),
          },
          signal: AbortSignal.timeout(ASK_TIMEOUT_MS),
        });
        if (res.status !== 200) {
          await res.body?.cancel();
          return { replica: replica.id };
        }
        return { replica: replica.id, body: (await res.json()) as T };
      } catch {
        return { replica: replica.id };
      }
    }),
  );
  const answers: Array<{ replica: string; body: T }> = [];
  const unanswered: string[] = [];
  for (const one of settled) {
    if ('body' in one) answers.push(one as { replica: string; body: T });
    else unanswered.push(one.replica);
  }
  return { answers, unanswered };
}
