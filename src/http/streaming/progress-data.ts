import type { Progress } from '@modelcontextprotocol/client';

/** The data of a `progress` event: the server's notification without its token. The dashboard reads it too. */
export interface ProgressData {
  progress: number;
  total?: number;
  message?: string;
}

export function progressData({ progress, total, message }: Progress): ProgressData {
  return { progress, ...(total !== undefined ? { total } : {}), ...(message !== undefined ? { message } : {}) };
}
