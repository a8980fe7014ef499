/** The statuses a request record can have, as `GET /v1/generations?status=` takes them. */
export const REQUEST_STATUSES = [
  'success',
  'error',
  'refused',
  'broken_stream',
  'client_closed',
  'replayed',
  'in_progress',
] as const;

/** Whether a status is a failure worth highlighting in the list. */
export function isFailureStatus(status: string): boolean {
  return status !== 'success' && status !== 'replayed' && status !== 'in_progress';
}
