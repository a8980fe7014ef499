/**
 * Finders for the number-shaped categories (payment cards, phone numbers): a linear scan for runs
 * of digit groups, then a check on each span of whole groups. No backtracking regular expression
 * runs over the caller's text.
 */

/** Digit groups that follow each other with only short separators (`seps[i]` after `groups[i]`). */
interface DigitRun {
  groups: string[];
  seps: string[];
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/**
 * The runs of digit groups in `text`: groups joined by at most `maxGap` characters of `separators`.
 * A run next to a letter or digit on either side still counts (`card:4111…`).
 */
function digitRuns(text: string, separators: string, maxGap: number): DigitRun[] {
  const runs: DigitRun[] = [];
  let run: DigitRun = { groups: [], seps: [] };
  let i = 0;
  while (i < text.length) {
    if (!isDigit(text[i])) {
      i++;
      continue;
    }
    let end = i;
    while (isDigit(text[end])) end++;
    run.groups.push(text.slice(i, end));
    let gap = end;
    while (gap < text.length && gap - end < maxGap && separators.includes(text[gap]!)) gap++;
    if (gap > end && isDigit(text[gap])) {
      run.seps.push(text.slice(end, gap));
      i = gap;
      continue;
    }
    runs.push(run);
    run = { groups: [], seps: [] };
    i = end;
  }
  return runs;
}

/** Whether a span of whole groups of some run has `min`–`max` digits and passes `accept`. */
function someSpan(
  runs: DigitRun[],
  min: number,
  max: number,
  accept: (digits: string, run: DigitRun, start: number, end: number) => boolean,
): boolean {
  for (const run of runs) {
    const { groups } = run;
    for (let start = 0; start < groups.length; start++) {
      let digits = '';
      for (let end = start; end < groups.length; end++) {
        digits += groups[end];
        if (digits.length > max) break;
        if (digits.length >= min && accept(digits, run, start, end)) return true;
      }
    }
  }
  return false;
}

/** The Luhn checksum of a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** A Luhn-valid number of 13 to 19 digits, single spaces or dashes allowed between digits. */
export function hasPaymentCard(text: string): boolean {
  return someSpan(digitRuns(text, ' -', 1), 13, 19, luhnValid);
}

/**
 * A phone number: 10 to 15 digits, an optional leading `+`, and the usual separators between
 * digit groups (spaces, dashes, dots, parentheses; at most two in a row, as in `) `).
 */
export function hasPhoneNumber(text: string): boolean {
  return someSpan(digitRuns(text, ' -.()', 2), 10, 15, (_, run, start, end) => {
    const dated = dateGroups(run);
    for (let i = start; i <= end; i++) if (dated.has(i)) return false;
    return true;
  });
}

/**
 * The groups of a run that are part of a date (`2024-01-15`, `15.01.2024`: one dash or dot twice):
 * a span holding one is not a phone number (`2024-01-15 10:30` has ten digits).
 */
function dateGroups(run: DigitRun): Set<number> {
  const dated = new Set<number>();
  const lengths = run.groups.map((g) => g.length);
  for (let i = 0; i + 2 < lengths.length; i++) {
    const [a, b, c] = [lengths[i], lengths[i + 1], lengths[i + 2]];
    const sep = run.seps[i];
    const dateSep = (sep === '-' || sep === '.') && run.seps[i + 1] === sep;
    if (dateSep && ((a === 4 && b === 2 && c === 2) || (a === 2 && b === 2 && c === 4))) {
      dated
        .add(i)
        .add(i + 1)
        .add(i + 2);
    }
  }
  return dated;
}
