import { type BayesModel, classify } from './bayes.js';
import { contentSignals, type Signal } from './content.js';
import { disposableDomain } from './disposable.js';
import { type ListHit, listHit, type SpamList } from './lists.js';
import { scanText, type TextScan } from './scan.js';
import { textsOf, tokensOf, wordsOf } from './tokens.js';

/** Marks (spam and not spam together) from which the learning filter has its full say. */
export const LEARNED_FULL_MARKS = 20;
/** A form's `settings.spam`, after defaults (merged with its organization's). */
export interface SpamPolicy {
  threshold: number;
  action: 'spam' | 'quarantine';
  minSeconds: number;
  block: SpamList;
  allow: SpamList;
}

export interface SpamInput {
  data: Record<string, unknown>;
  /** The data's texts and addresses, when the caller has them already (spamFacts(data)). */
  facts?: SpamFacts;
  honeypotFilled: boolean;
  userAgent: string | undefined;
  ip: string;
  /** Seconds since the page that posted was rendered (from its signed render token); null when it sent none. */
  renderAgeS: number | null;
  /** The post sent a render token that does not verify (made up, altered, or another form's). */
  badRenderToken?: boolean;
  /** The organization's learning filter; null or empty while it has no marks. */
  model: BayesModel | null;
  /** Recent submissions across the organization's forms with the same text, and from the same address. */
  velocity?: { sameContent: number; sameAddress: number };
}

export interface SpamResult {
  score: number;
  /** Machine codes of the signals that fired (the spec's `spam.reasons`). */
  reasons: string[];
  /** The same signals with a short text and the weight each added (an extension: `spam.signals`). */
  signals: Signal[];
  /** What the score decides: `spam`, `quarantine` (reason `spam_suspected`) or nothing. */
  verdict: 'spam' | 'quarantine' | null;
}

const EMAIL_RE = /^[^\s@]{1,64}@[^\s@]{1,255}$/;
/** Above this many posts of the same content, or from one address, in the window, velocity scores. */
export const VELOCITY_LIMIT = 5;
const DAY_S = 86_400;

/** Whole-value email addresses in the data (top-level strings and arrays of strings), lowercased. */
export function emailsOf(data: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const v of Object.values(data)) {
    if (typeof v === 'string') addEmail(out, v);
    else if (Array.isArray(v)) for (const s of v) if (typeof s === 'string') addEmail(out, s);
  }
  return out;
}

function addEmail(out: string[], s: string) {
  // An address has an @: the other values are passed over without a lowercased copy.
  if (s.length > 320 || !s.includes('@')) return;
  const scan = scanText(s);
  if (!scan.ascii) {
    const t = s.trim().toLowerCase();
    if (EMAIL_RE.test(t)) out.push(t);
    return;
  }
  // ASCII (nearly every address): EMAIL_RE's rule read off the scan, with no regular expression
  // run and no copy made when the address is written in lowercase without surrounding spaces.
  if (scan.ats !== 1 || !scan.address) return;
  const local = scan.atIndex - scan.start;
  const domain = scan.end - scan.atIndex - 1;
  if (local < 1 || local > 64 || domain < 1 || domain > 255) return;
  out.push(scan.upper > 0 || scan.start > 0 || scan.end < s.length ? s.trim().toLowerCase() : s);
}

/** What the signals read of a submission's data: its string values and its whole-value addresses. */
export interface SpamFacts {
  texts: string[];
  emails: string[];
  /** each text's scan (scan.ts); absent: each reader scans the texts it needs */
  scans?: TextScan[];
}

export function spamFacts(data: Record<string, unknown>): SpamFacts {
  const texts = textsOf(data);
  const scans: TextScan[] = new Array(texts.length);
  for (let i = 0; i < texts.length; i += 1) scans[i] = scanText(texts[i]);
  return { texts, emails: emailsOf(data), scans };
}

const listText = (hit: ListHit) => `${hit.kind} ${hit.value}`;
const round = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The spam verdict of one submission: every cheap signal with its reason, the owner's lists, the
 * learning filter, combined into a score in 0..1 (independent odds: 1 - Π(1 - weight)). The honeypot
 * decides spam alone; an allow-list match ends as received unless the honeypot is filled; a
 * block-list match decides by itself.
 */
export function spamVerdict(input: SpamInput, policy: SpamPolicy): SpamResult {
  const signals: Signal[] = [];
  if (input.honeypotFilled) {
    signals.push({ code: 'honeypot_filled', text: 'the hidden honeypot field was filled', weight: 1 });
    return { score: 1, reasons: ['honeypot_filled'], signals, verdict: 'spam' };
  }
  const { texts, emails, scans } = input.facts ?? spamFacts(input.data);
  // Words only when a keyword list needs them (the lists without keywords look at addresses and the IP).
  const needWords = policy.allow.keywords.size > 0 || policy.block.keywords.size > 0;
  const words = needWords ? texts.flatMap(wordsOf) : [];
  const facts = { emails, ip: input.ip, words };
  const allowed = listHit(policy.allow, facts);
  if (allowed) {
    signals.push({ code: 'allow_list', text: `on the allow list (${listText(allowed)})`, weight: 0 });
    return { score: 0, reasons: ['allow_list'], signals, verdict: null };
  }
  const blocked = listHit(policy.block, facts);
  if (blocked) signals.push({ code: 'block_list', text: `on the block list (${listText(blocked)})`, weight: 1 });
  if (!input.userAgent) signals.push({ code: 'no_user_agent', text: 'no User-Agent header', weight: 0.1 });
  if (input.renderAgeS !== null) {
    if (input.renderAgeS < policy.minSeconds) {
      signals.push({
        code: 'too_fast',
        text: `sent ${Math.max(0, Math.round(input.renderAgeS * 10) / 10)} s after the page was shown`,
        weight: 0.6,
      });
    } else if (input.renderAgeS > DAY_S) {
      signals.push({ code: 'stale_page', text: 'the page was shown more than a day before', weight: 0.3 });
    }
  }
  if (input.badRenderToken) {
    // Modest: a page cached with an old form id or a clumsy proxy sends one too, not only a forger.
    signals.push({ code: 'bad_render_token', text: 'the page sent a render token that does not verify', weight: 0.3 });
  }
  signals.push(...contentSignals(texts, scans));
  for (const email of emails) {
    const domain = email.slice(email.lastIndexOf('@') + 1);
    if (!domain.includes('.')) {
      signals.push({ code: 'email_no_dot', text: `the address ${email} has no dot in its domain`, weight: 0.4 });
      break;
    }
    const disposable = disposableDomain(domain);
    if (disposable) {
      signals.push({ code: 'disposable_email', text: `a disposable mail domain (${disposable})`, weight: 0.5 });
      break;
    }
  }
  if (input.velocity && input.velocity.sameContent >= VELOCITY_LIMIT) {
    signals.push({
      code: 'velocity_content',
      text: `the same text was posted ${input.velocity.sameContent} times recently`,
      weight: 0.5,
    });
  }
  if (input.velocity && input.velocity.sameAddress >= VELOCITY_LIMIT) {
    signals.push({
      code: 'velocity_address',
      text: `${input.velocity.sameAddress} posts from the same address recently`,
      weight: 0.4,
    });
  }
  let keep = 1;
  for (const s of signals) keep *= 1 - s.weight;
  let score = 1 - keep;
  const learned = input.model ? classify(input.model, tokensOf(texts)) : null;
  if (input.model && learned && learned.clues.length > 0) {
    const p = learned.probability;
    // A filter taught by a handful of marks knows little: its say grows with the marks it has
    // learned, in full from LEARNED_FULL_MARKS on, so one stray mark cannot decide the next post.
    const confidence = Math.min(1, (input.model.spam + input.model.ham) / LEARNED_FULL_MARKS);
    if (p >= 0.5) {
      const weight = round(Math.min(0.95, (p - 0.5) / 0.4) * confidence);
      if (weight > 0.05) {
        signals.push({
          code: 'learned_spam',
          text: `the filter learned from your marks says spam (${round(p)})`,
          weight,
        });
        score = 1 - (1 - score) * (1 - weight);
      }
    } else if (!blocked && confidence * (0.5 - p) > 0.05) {
      // Messages like ones the owner marked as fine weigh less, whatever else they look like.
      signals.push({
        code: 'learned_ham',
        text: `the filter learned from your marks says not spam (${round(p)})`,
        weight: 0,
      });
      score *= 1 - confidence * (0.5 - p);
    }
  }
  score = round(Math.min(1, Math.max(0, score)));
  const verdict = blocked
    ? 'spam'
    : score >= policy.threshold
      ? policy.action === 'quarantine'
        ? 'quarantine'
        : 'spam'
      : null;
  return { score, reasons: signals.map((s) => s.code), signals, verdict };
}
