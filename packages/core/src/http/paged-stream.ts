/**
 * A response body read from storage a page at a time as the client reads it (pull, no read-ahead),
 * so memory holds one page whatever the number of rows: the batch results (NDJSON) and the request
 * records export (CSV). `head` (a header line) comes first; then each page's `lines`, the next
 * page read after `cursorOf` its last row; a page shorter than `pageSize` is the last. A failed
 * read is told to `onError` (to log it) and cuts the stream short.
 */
export function pagedStream<Row, Cursor>(source: {
  head?: string;
  pageSize: number;
  readPage(after: Cursor | undefined): Promise<Row[]>;
  cursorOf(row: Row): Cursor;
  lines(page: Row[]): string | Promise<string>;
  onError(error: unknown): void;
}): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let after: Cursor | undefined;
  let headSent = source.head === undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!headSent) {
          headSent = true;
          controller.enqueue(encoder.encode(source.head));
          return;
        }
        try {
          const page = await source.readPage(after);
          if (page.length > 0) {
            after = source.cursorOf(page[page.length - 1]!);
            controller.enqueue(encoder.encode(await source.lines(page)));
          }
          if (page.length < source.pageSize) controller.close();
        } catch (error) {
          source.onError(error);
          controller.error(error);
        }
      },
    },
    { highWaterMark: 0 },
  );
}
