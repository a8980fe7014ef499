import { LRUCache } from 'lru-cache';

/** Most answers one process keeps at hand, and the most characters they may take together. */
const MAX_ANSWERS = 2_000;
const MAX_CHARACTERS = 32 * 1024 * 1024;

interface Recent<Answer> {
  answer: Answer;
  expiresAt: number;
}

/**
 * The answers this process kept or found in the response cache most recently, so that a repeated hit
 * needs neither the database read nor the unsealing. In memory only, bounded (2,000 answers, 32 Mi
 * characters), never written anywhere; each entry dies with the stored one (same expiry). Keyed by
 * account and request key, so one account never sees another's. Another process's newer entry for
 * the same request may differ only as two answers to the identical request may.
 */
export class RecentAnswers<Answer extends object> {
  private readonly answers = new LRUCache<string, Recent<Answer>>({
    max: MAX_ANSWERS,
    maxSize: MAX_CHARACTERS,
  });

  /** The live answer for this account and request key, or `undefined`. */
  get(accountId: string, key: string, now: number): Answer | undefined {
    const id = `${accountId}\u0000${key}`;
    const recent = this.answers.get(id);
    if (!recent) return undefined;
    if (recent.expiresAt <= now) {
      this.answers.delete(id);
      return undefined;
    }
    return recent.answer;
  }

  /** Keeps an answer until `expiresAt`; `characters` is the size of its serialised form. */
  set(accountId: string, key: string, answer: Answer, expiresAt: number, characters: number): void {
    this.answers.set(`${accountId}\u0000${key}`, { answer, expiresAt }, { size: Math.max(1, characters) });
  }
}
