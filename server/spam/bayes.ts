/**
 * The learning filter: a naive-Bayes classifier over a submission's tokens, in the form SpamBayes
 * uses (Robinson's smoothed token probabilities, combined with Fisher's chi-square method). It learns
 * only from the owner's marks, per organization, and says nothing until it has marks.
 */

/** Counts of one organization's marks: documents per verdict and, per token, documents that held it. */
export interface BayesModel {
  spam: number;
  ham: number;
  tokens: ReadonlyMap<string, readonly [spam: number, ham: number]>;
}

/** How strongly an unseen token pulls to neutral (Robinson's s), and the neutral value (x). */
const STRENGTH = 0.45;
const NEUTRAL = 0.5;
/** Tokens closer to neutral than this are ignored; at most MAX_CLUES of the strongest are combined. */
const MIN_DISTANCE = 0.1;
const MAX_CLUES = 50;

/** The smoothed probability that a message holding this token is spam. */
export function tokenProbability(model: BayesModel, spamCount: number, hamCount: number): number {
  const spamRatio = spamCount / Math.max(model.spam, 1);
  const hamRatio = hamCount / Math.max(model.ham, 1);
  const n = spamCount + hamCount;
  const p = spamRatio + hamRatio === 0 ? NEUTRAL : spamRatio / (spamRatio + hamRatio);
  return (STRENGTH * NEUTRAL + n * p) / (STRENGTH + n);
}

/** Upper tail of the chi-square distribution with an even number of degrees of freedom. */
export function chi2Q(x2: number, dof: number): number {
  const m = x2 / 2;
  let term = Math.exp(-m);
  let sum = term;
  for (let i = 1; i < dof / 2; i += 1) {
    term *= m / i;
    sum += term;
  }
  return Math.min(sum, 1);
}

export interface Clue {
  token: string;
  probability: number;
}

/**
 * The probability (0..1) that a submission with these tokens is spam, with the clues that decided
 * it; null while the model has no marks (it then contributes nothing).
 */
export function classify(model: BayesModel, tokens: readonly string[]): { probability: number; clues: Clue[] } | null {
  if (model.spam + model.ham === 0) return null;
  const clues: Clue[] = [];
  for (const token of tokens) {
    const counts = model.tokens.get(token);
    if (!counts) continue;
    const probability = tokenProbability(model, counts[0], counts[1]);
    if (Math.abs(probability - NEUTRAL) >= MIN_DISTANCE) clues.push({ token, probability });
  }
  if (clues.length === 0) return { probability: NEUTRAL, clues };
  clues.sort((a, b) => Math.abs(b.probability - NEUTRAL) - Math.abs(a.probability - NEUTRAL));
  clues.length = Math.min(clues.length, MAX_CLUES);
  let lnSpam = 0;
  let lnHam = 0;
  for (const { probability } of clues) {
    lnHam += Math.log(Math.max(probability, 1e-9));
    lnSpam += Math.log(Math.max(1 - probability, 1e-9));
  }
  const dof = 2 * clues.length;
  const s = 1 - chi2Q(-2 * lnSpam, dof);
  const h = 1 - chi2Q(-2 * lnHam, dof);
  return { probability: Math.min(1, Math.max(0, (s - h + 1) / 2)), clues };
}

/** The tokens that weigh most each way, for `GET /v1/spam`. */
export function strongestTokens(model: BayesModel, limit: number) {
  const all = [...model.tokens].map(([token, [s, h]]) => ({
    token,
    probability: Math.round(tokenProbability(model, s, h) * 1000) / 1000,
    spam: s,
    ham: h,
  }));
  const spam = all
    .filter((t) => t.probability > NEUTRAL)
    .sort((a, b) => b.probability - a.probability || b.spam - a.spam)
    .slice(0, limit);
  const ham = all
    .filter((t) => t.probability < NEUTRAL)
    .sort((a, b) => a.probability - b.probability || b.ham - a.ham)
    .slice(0, limit);
  return { spam, ham };
}
