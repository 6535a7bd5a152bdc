import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { type BayesModel, chi2Q, classify } from '../../server/spam/bayes.js';
import { contentSignals, repeatsAWord } from '../../server/spam/content.js';
import { disposableDomain } from '../../server/spam/disposable.js';
import { compileList, listHit, listProblems } from '../../server/spam/lists.js';
import { phraseSet } from '../../server/spam/phrases.js';
import { hashed, scanText, textHash } from '../../server/spam/scan.js';
import { textsOf, tokensOf, wordsOf } from '../../server/spam/tokens.js';
import { emailsOf, type SpamPolicy, spamVerdict } from '../../server/spam/verdict.js';

const policy = (over: Partial<SpamPolicy> = {}): SpamPolicy => ({
  threshold: 0.8,
  action: 'spam',
  minSeconds: 2,
  block: compileList(),
  allow: compileList(),
  ...over,
});
const base = { honeypotFilled: false, userAgent: 'Mozilla/5.0', ip: '203.0.113.7', renderAgeS: null, model: null };
const codes = (s: { code: string }[]) => s.map((x) => x.code);
/** A repeatable random source (a linear congruential generator): rand(n) is in 0..n-1. */
const randomFrom = (start: number) => {
  let seed = start;
  return (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
};

describe('tokens', () => {
  it('reads nested string values in order, lowercases words and keeps linked hosts', () => {
    const texts = textsOf({ a: 'Hello World', b: { c: ['Visit https://Spam.example/x now'] }, n: 3 });
    expect(texts).toEqual(['Hello World', 'Visit https://Spam.example/x now']);
    expect(wordsOf(texts[0])).toEqual(['hello', 'world']);
    expect(tokensOf(texts)).toContain('host:spam.example');
    expect(tokensOf(texts)).toContain('visit');
  });

  it('adds word pairs and features of the whole submission: links, TLD, money, script, address domain', () => {
    const tokens = tokensOf([
      'Mike4821@Mail.example',
      'Earn $4,500 a week: https://www.cash.xyz/a https://b.example https://c.example',
    ]);
    expect(tokens).toEqual(expect.arrayContaining(['earn', 'a week', 'host:cash.xyz', 'tld:xyz', 'links:3+']));
    expect(tokens).toEqual(expect.arrayContaining(['money', 'money:big', 'email:mail.example', 'email:digits']));
    // A whole-value address gives its domain only, not its words.
    expect(tokens).not.toContain('mike4821');
    expect(tokensOf(['Price: €12.50, see you'])).toEqual(expect.arrayContaining(['money', 'links:0', 'see you']));
    expect(tokensOf(['Price: €12.50'])).not.toContain('money:big');
    expect(tokensOf(['Займы онлайн'])).toEqual(expect.arrayContaining(['займы онлайн', 'script:cyrillic']));
    // CJK runs carry no spaces: their characters are counted in pairs.
    expect(tokensOf(['免费注册送88元'])).toEqual(expect.arrayContaining(['免费', '费注', 'script:cjk']));
  });
});

describe('phrases', () => {
  it('matches words and phrases case-insensitively on word boundaries only', () => {
    const set = phraseSet(['crypto', 'free money', 'SEO services']);
    expect(set.find(wordsOf('Get FREE   money today'))).toBe('free money');
    expect(set.find(wordsOf('we offer seo services'))).toBe('SEO services');
    expect(set.find(wordsOf('cryptography lecture'))).toBeNull();
    expect(set.find(wordsOf('free of money'))).toBeNull();
  });

  it('stays linear on a long adversarial text', () => {
    const set = phraseSet(['a a a a a a a b']);
    const words = Array.from({ length: 200_000 }, () => 'a');
    // 200,000 starts × at most 8 steps: a regular expression with backtracking would take far longer.
    expect(set.find(words)).toBeNull();
  });
});

describe('lists', () => {
  const list = compileList(
    { emails: ['Bad@Example.com'], domains: ['spam.test'], ips: ['198.51.100.0/24', '2001:db8::/32'] },
    { keywords: ['casino'] },
  );
  it('matches an address, a domain and its subdomains, a CIDR of either family and a keyword', () => {
    const f = (emails: string[], ip = '192.0.2.1', words: string[] = []) => listHit(list, { emails, ip, words });
    expect(f(['bad@example.com'])).toEqual({ kind: 'email', value: 'bad@example.com' });
    expect(f(['x@mail.spam.test'])).toEqual({ kind: 'domain', value: 'spam.test' });
    expect(f(['x@notspam.test'])).toBeNull();
    expect(f([], '198.51.100.42')).toEqual({ kind: 'ip', value: '198.51.100.42' });
    expect(f([], '2001:db8::5')).toEqual({ kind: 'ip', value: '2001:db8::5' });
    expect(f([], '192.0.2.1', wordsOf('best CASINO bonus'))).toEqual({ kind: 'keyword', value: 'casino' });
  });
  it('names the bad entries of a list', () => {
    expect(listProblems({ ips: ['10.0.0.0/8', '10.0.0.0/33', 'nope'], emails: ['a@b', 'x'] }, 'spam.block')).toEqual([
      { path: 'spam.block.ips.1', message: '"10.0.0.0/33" is not an IP address or CIDR' },
      { path: 'spam.block.ips.2', message: '"nope" is not an IP address or CIDR' },
      { path: 'spam.block.emails.1', message: '"x" is not an email address' },
    ]);
  });
});

describe('content signals', () => {
  it('each fires on its own pattern and not on an ordinary message', () => {
    expect(contentSignals(['Hi, I would like a quote for 3 chairs. Thanks, Ann'])).toEqual([]);
    expect(codes(contentSignals(['see http://a.example http://b.example http://c.example']))).toContain('many_links');
    expect(codes(contentSignals(['go https://bit.ly/xyz']))).toContain('url_shortener');
    expect(codes(contentSignals(['<a href="x">cheap</a>']))).toContain('markup');
    expect(codes(contentSignals(['[url=http://x]cheap[/url]']))).toContain('markup');
    expect(codes(contentSignals(['buy buy buy buy buy buy now buy buy cheap buy']))).toContain('repeated_text');
    expect(codes(contentSignals(['$$$ %%% ### !!! 1234 5678 ***']))).toContain('mostly_symbols');
    expect(codes(contentSignals(['THIS IS AN AMAZING OFFER FOR YOU']))).toContain('all_caps');
  });
});

describe('repeated words', () => {
  // The rule, on wordsOf's words: 10 words or more, one of 3 letters or more making up 40 % of them.
  const reference = (text: string) => {
    const ws = wordsOf(text);
    if (ws.length < 10) return false;
    const freq = new Map<string, number>();
    let top = 0;
    for (const w of ws.filter((x) => x.length >= 3)) {
      freq.set(w, (freq.get(w) ?? 0) + 1);
      top = Math.max(top, freq.get(w) ?? 0);
    }
    return top * 10 >= ws.length * 4;
  };

  it('the ASCII fast path counts the same words as wordsOf (random texts, joiners, digits, capitals)', () => {
    const alphabet = "abAB01-_' .,!zZ";
    const rand = randomFrom(7);
    let fired = 0;
    const piece = () => {
      let w = '';
      for (let j = 1 + rand(6); j > 0; j -= 1) w += alphabet[rand(alphabet.length)];
      return w;
    };
    for (let k = 0; k < 5000; k += 1) {
      // A few random "words" (any of the characters, so joiners and separators inside them too),
      // picked again and again: some texts repeat one enough, most do not.
      const vocab = Array.from({ length: 2 + rand(5) }, piece);
      const text = Array.from({ length: 1 + rand(20) }, () => vocab[rand(vocab.length)]).join(' .,'[rand(3)]);
      expect(repeatsAWord(text), JSON.stringify(text)).toBe(reference(text));
      if (reference(text)) fired += 1;
    }
    expect(fired).toBeGreaterThan(100);
    expect(fired).toBeLessThan(4900);
    for (const text of [
      "don't-stop don't-stop don't-stop don't-stop a b c d e f g",
      "Spam SPAM spam-- spam__ spam' eggs ham toast tea jam bread",
      'caf\u00e9 caf\u00e9 caf\u00e9 caf\u00e9 x y z w v u t', // not ASCII: the regular expression decides
      'it\u2019s it\u2019s it\u2019s it\u2019s a b c d e f g',
    ]) {
      expect(repeatsAWord(text), text).toBe(reference(text));
    }
  });
});

describe('the one pass over a text (scan.ts)', () => {
  // What each reader of the scan used to compute in a pass of its own.
  const normalized = (t: string) => t.toLowerCase().replace(/\s+/g, ' ').trim();
  const most = (t: string) => {
    const freq = new Map<string, number>();
    for (const w of wordsOf(t)) if (w.length >= 3) freq.set(w, (freq.get(w) ?? 0) + 1);
    return Math.max(0, ...freq.values());
  };

  it('counts letters, capitals and non-space characters, bounds the top word and hashes the text as normalized', () => {
    const alphabet = "abcXYZ019 -_'@.,!\t\n  ";
    const rand = randomFrom(11);
    for (let k = 0; k < 3000; k += 1) {
      let text = '';
      for (let j = rand(80); j > 0; j -= 1) text += alphabet[rand(alphabet.length)];
      const scan = scanText(text);
      expect(scan.ascii).toBe(true);
      expect(scan.letters, text).toBe(text.match(/[A-Za-z]/g)?.length ?? 0);
      expect(scan.upper, text).toBe(text.match(/[A-Z]/g)?.length ?? 0);
      expect(scan.nonSpace, text).toBe(text.replace(/\s+/g, '').length);
      expect(scan.words, text).toBe(wordsOf(text).length);
      expect(scan.fullest, text).toBeGreaterThanOrEqual(most(text));
      textHash(normalized(text));
      expect([scan.h1, scan.h2, scan.n], text).toEqual([hashed.h1, hashed.h2, hashed.n]);
      expect(scan.address, text).toBe(text.includes('@') && !normalized(text).includes(' '));
    }
  });

  it('spaces and capitals do not change the hash; other words do; a text that is not ASCII is left to its readers', () => {
    const a = scanText('  Hello   there,\tWORLD\n');
    const b = scanText('hello there, world');
    expect([a.h1, a.h2, a.n]).toEqual([b.h1, b.h2, b.n]);
    expect(scanText('hello there, worlds').h1).not.toBe(b.h1);
    expect(scanText('caf\u00e9 au lait, please, twice').ascii).toBe(false);
  });
});

describe('spamVerdict', () => {
  it('the honeypot decides spam alone, even on the allow list', () => {
    const r = spamVerdict(
      { ...base, data: { email: 'ok@friend.example' }, honeypotFilled: true },
      policy({ allow: compileList({ emails: ['ok@friend.example'] }) }),
    );
    expect(r).toMatchObject({ score: 1, reasons: ['honeypot_filled'], verdict: 'spam' });
  });

  it('allow wins over a block list and content', () => {
    const r = spamVerdict(
      { ...base, data: { email: 'ok@friend.example', m: 'CASINO https://bit.ly/x' } },
      policy({ allow: compileList({ domains: ['friend.example'] }), block: compileList({ keywords: ['casino'] }) }),
    );
    expect(r).toMatchObject({ score: 0, reasons: ['allow_list'], verdict: null });
  });

  it('a block-list match decides spam; action quarantine only changes the threshold verdict', () => {
    const r = spamVerdict(
      { ...base, data: { m: 'hello' }, ip: '198.51.100.9' },
      policy({ block: compileList({ ips: ['198.51.100.0/24'] }) }),
    );
    expect(r.verdict).toBe('spam');
    expect(r.reasons).toContain('block_list');
  });

  it('too_fast from the render age; a disposable or dotless address scores with its reason', () => {
    const fast = spamVerdict({ ...base, data: { m: 'hi' }, renderAgeS: 0.5 }, policy());
    expect(fast.reasons).toEqual(['too_fast']);
    expect(fast.signals[0].text).toMatch(/0.5 s/);
    expect(spamVerdict({ ...base, data: { email: 'x@mailinator.com' } }, policy()).reasons).toContain(
      'disposable_email',
    );
    expect(spamVerdict({ ...base, data: { email: 'x@localhost' } }, policy()).reasons).toContain('email_no_dot');
    expect(spamVerdict({ ...base, data: { email: 'ann@example.com' } }, policy()).reasons).toEqual([]);
  });

  it('combines signals into a score; over the threshold the action decides', () => {
    const data = {
      m: 'CHEAP PILLS ONLINE NOW <a href="http://x.example">http://bit.ly/a</a> http://y.example http://z.example',
    };
    const spam = spamVerdict({ ...base, data }, policy());
    expect(spam.score).toBeGreaterThanOrEqual(0.8);
    expect(spam.verdict).toBe('spam');
    expect(spamVerdict({ ...base, data }, policy({ action: 'quarantine' })).verdict).toBe('quarantine');
    expect(spamVerdict({ ...base, data }, policy({ threshold: 1 })).verdict).toBeNull();
  });

  it('velocity scores posts of the same content or address', () => {
    const r = spamVerdict({ ...base, data: { m: 'x' }, velocity: { sameContent: 9, sameAddress: 0 } }, policy());
    expect(r.reasons).toEqual(['velocity_content']);
  });

  it('emailsOf takes whole-value addresses only', () => {
    expect(emailsOf({ a: ' Ann@Example.com ', b: ['x@y.z', 'not one'], c: 'write to a@b.c please' })).toEqual([
      'ann@example.com',
      'x@y.z',
    ]);
  });
});

describe('the learning filter', () => {
  const model = (spam: string[][], ham: string[][]): BayesModel => {
    const tokens = new Map<string, [number, number]>();
    for (const doc of spam)
      for (const t of new Set(doc)) tokens.set(t, [(tokens.get(t)?.[0] ?? 0) + 1, tokens.get(t)?.[1] ?? 0]);
    for (const doc of ham)
      for (const t of new Set(doc)) tokens.set(t, [tokens.get(t)?.[0] ?? 0, (tokens.get(t)?.[1] ?? 0) + 1]);
    return { spam: spam.length, ham: ham.length, tokens };
  };
  it('says nothing without marks', () => {
    expect(classify({ spam: 0, ham: 0, tokens: new Map() }, ['a'])).toBeNull();
  });
  it('chi2Q is a probability that falls as x2 grows', () => {
    expect(chi2Q(0, 4)).toBe(1);
    expect(chi2Q(10, 4)).toBeLessThan(chi2Q(2, 4));
  });
  it('learns words each way and scores unseen messages by them', () => {
    const m = model(
      Array.from({ length: 20 }, (_, i) => ['viagra', 'cheap', 'offer', `s${i}`]),
      Array.from({ length: 20 }, (_, i) => ['meeting', 'invoice', 'thanks', `h${i}`]),
    );
    expect(classify(m, ['cheap', 'viagra', 'today'])?.probability).toBeGreaterThan(0.9);
    expect(classify(m, ['meeting', 'thanks', 'today'])?.probability).toBeLessThan(0.1);
    const verdict = spamVerdict({ ...base, data: { m: 'cheap viagra offer' }, model: m }, policy());
    expect(verdict.reasons).toContain('learned_spam');
    expect(verdict.verdict).toBe('spam');
    const fine = spamVerdict(
      { ...base, data: { m: 'meeting invoice thanks http://a.example http://b.example http://c.example' }, model: m },
      policy(),
    );
    expect(fine.reasons).toEqual(['many_links', 'learned_ham']);
    expect(fine.score).toBeLessThan(0.5 * 0.6);
  });
});

describe('the disposable-domain list', () => {
  it('answers as a plain set of the package does: every listed domain, its subdomains, and nothing else', () => {
    const listed = (createRequire(import.meta.url)('disposable-email-domains') as string[]).map((d) => d.toLowerCase());
    const set = new Set(listed);
    const reference = (domain: string): string | null => {
      let d = domain.toLowerCase();
      for (;;) {
        if (set.has(d)) return d;
        const dot = d.indexOf('.');
        if (dot < 0) return null;
        d = d.slice(dot + 1);
      }
    };
    expect(listed.length).toBeGreaterThan(50_000);
    for (const d of listed) expect(disposableDomain(d)).toBe(d);
    let seed = 11;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const probes = ['example.com', 'gmail.com', 'Mailinator.COM', 'a.b.mailinator.com', 'com', 'localhost', ''];
    for (let i = 0; i < 20_000; i += 1) {
      const d = listed[rnd(listed.length)];
      // a subdomain, the domain with a letter changed or dropped, and another ending
      probes.push(`mx${i}.${d}`, d.slice(0, -1), `x${d}`, d.replace(/\.[^.]+$/, '.zz'), d.toUpperCase());
    }
    let hits = 0;
    for (const d of probes) {
      const want = reference(d);
      if (want) hits += 1;
      expect(disposableDomain(d)).toBe(want);
    }
    // both answers are exercised
    expect(hits).toBeGreaterThan(40_000);
    expect(probes.length - hits).toBeGreaterThan(20_000);
  });
});
