/**
 * The small template language of our spam corpus, with a seeded random source: `{a|b|c}` picks one
 * alternative (`{|text}` sometimes adds text), `{name}` fills a slot from the slot functions.
 * Innermost braces are expanded first, so alternatives nest and hold slots.
 */

/** A seeded random source (mulberry32): the same seed gives the same corpus on every machine. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  shuffle<T>(list: T[]): T[] {
    for (let i = list.length - 1; i > 0; i -= 1) {
      const j = Math.floor(this.next() * (i + 1));
      [list[i], list[j]] = [list[j], list[i]];
    }
    return list;
  }
}

export type Slots = Record<string, (r: Rng) => string>;

const INNER = /\{([^{}]*)\}/;

/** Expands a template: alternatives and slots, innermost first; an unknown slot name is an error. */
export function expand(template: string, r: Rng, slots: Slots): string {
  let s = template;
  for (let guard = 0; guard < 500; guard += 1) {
    const m = INNER.exec(s);
    if (!m) return s;
    const body = m[1];
    let value: string;
    if (body.includes('|')) value = r.pick(body.split('|'));
    else {
      const slot = slots[body];
      if (!slot) throw new Error(`unknown slot {${body}} in a corpus template`);
      value = slot(r);
    }
    // Slot values may hold alternatives themselves: they are expanded on the next rounds.
    s = s.slice(0, m.index) + value + s.slice(m.index + m[0].length);
  }
  throw new Error('a corpus template does not terminate');
}
