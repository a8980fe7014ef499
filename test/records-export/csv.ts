/**
 * A strict RFC 4180 reader for the tests: quoted cells may hold quotes (doubled), commas, CR and
 * LF; lines end with LF (CRLF accepted). Throws on a quote in the middle of an unquoted cell.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let i = 0;
  let quoted = false;
  let cellStart = true;
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 2;
        continue;
      }
      if (ch === '"') {
        quoted = false;
        i++;
        continue;
      }
      cell += ch;
      i++;
      continue;
    }
    if (ch === '"') {
      if (!cellStart) throw new Error(`a quote inside an unquoted cell at ${i}`);
      quoted = true;
      cellStart = false;
      i++;
    } else if (ch === ',') {
      row.push(cell);
      cell = '';
      cellStart = true;
      i++;
    } else if (ch === '\n' || (ch === '\r' && text[i + 1] === '\n')) {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      cellStart = true;
      i += ch === '\r' ? 2 : 1;
    } else {
      cell += ch;
      cellStart = false;
      i++;
    }
  }
  if (quoted) throw new Error('an unterminated quoted cell');
  if (cell !== '' || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** The rows after the header, each as an object keyed by the header's names. */
export function csvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header = [], ...rows] = parseCsv(text);
  return {
    header,
    rows: rows.map((cells) => {
      if (cells.length !== header.length)
        throw new Error(`a row of ${cells.length} cells: ${cells.join('|')}`);
      return Object.fromEntries(header.map((name, i) => [name, cells[i]!]));
    }),
  };
}
