/**
 * Deepest nesting of objects and arrays a request body may have. Real requests stay far below it
 * (a tool's JSON schema is a few tens of levels at most); a body nested thousands of levels deep
 * would make `JSON.stringify` — in the pre-flight, in the upstream call — overflow the stack.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether a JSON text nests objects and arrays deeper than `maxDepth`. One pass over the text,
 * before it is parsed, so nothing recursive ever sees an over-deep value. Brackets inside strings
 * do not count; the text need not be valid JSON (the parser judges that afterwards).
 */
export function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      depth--;
    }
  }
  return false;
}
