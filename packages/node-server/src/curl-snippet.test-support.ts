/* Reads a `curl` command out of printed text (the first-start banner) so a test can run it. */

export interface CurlCommand {
  /** The command as printed, continuation lines included: paste it into a shell as it is. */
  text: string;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * The first printed `curl` whose URL ends with `path`, with its `\`-continued lines. Understands the
 * subset the banner prints: a URL, `-H "Name: value"` and `-d '…'` (which makes it a POST).
 */
export function findCurl(printed: string, path: string): CurlCommand {
  const lines = printed.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = lines[i]!.trimStart();
    if (!start.startsWith('curl ')) continue;
    const parts = [start];
    while (parts.at(-1)!.endsWith('\\') && i + 1 < lines.length) parts.push(lines[++i]!.trim());
    const text = parts.join('\n');
    const words = shellWords(parts.map((p) => p.replace(/\\$/, '')).join(' '));
    const command = interpret(text, words);
    if (new URL(command.url).pathname.endsWith(path)) return command;
  }
  throw new Error(`no curl for ${path} in:\n${printed}`);
}

/** Runs the command with `fetch`, as curl would send it. */
export function fetchCurl(command: CurlCommand): Promise<Response> {
  return fetch(command.url, {
    method: command.method,
    headers: command.headers,
    ...(command.body !== undefined && { body: command.body }),
  });
}

function interpret(text: string, words: string[]): CurlCommand {
  const command: CurlCommand = { text, url: '', method: 'GET', headers: {}, body: undefined };
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (word === '-H') {
      const header = words[++i]!;
      const colon = header.indexOf(':');
      command.headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
    } else if (word === '-d') {
      command.body = words[++i];
      command.method = 'POST';
    } else if (word.startsWith('-')) {
      throw new Error(`curl option ${word} is not understood by this test helper`);
    } else {
      command.url = word;
    }
  }
  return command;
}

/** Splits a POSIX shell line into words: whitespace, "double" and 'single' quotes (no escapes inside). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) words.push(match[1] ?? match[2] ?? match[3]!);
  return words;
}
