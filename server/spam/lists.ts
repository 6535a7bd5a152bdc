import net from 'node:net';
import { type PhraseSet, phraseSet } from './phrases.js';

/** An owner's block or allow list, as `settings.spam.block` / `settings.spam.allow` hold it. */
export interface SpamListInput {
  emails?: string[];
  domains?: string[];
  ips?: string[];
  keywords?: string[];
}

export interface SpamList {
  emails: Set<string>;
  domains: Set<string>;
  ips: net.BlockList | null;
  keywords: PhraseSet;
  empty: boolean;
}

/** What a submission offers to the lists: its addresses, their domains, its IP and its words. */
export interface ListFacts {
  emails: readonly string[];
  ip: string;
  words: readonly string[];
}

export type ListHit = { kind: 'email' | 'domain' | 'ip' | 'keyword'; value: string };

const norm = (s: string) => s.trim().toLowerCase();

/** Parses one CIDR (or a bare address) into the list; false when it is not one. */
export function addCidr(list: net.BlockList, cidr: string): boolean {
  const [addr, bits, extra] = cidr.trim().split('/');
  const type = net.isIPv6(addr) ? 'ipv6' : net.isIPv4(addr) ? 'ipv4' : null;
  if (!type || extra !== undefined) return false;
  const max = type === 'ipv6' ? 128 : 32;
  const prefix = bits === undefined ? max : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (bits !== undefined && !/^\d+$/.test(bits))) {
    return false;
  }
  list.addSubnet(addr, prefix, type);
  return true;
}

/** One list from one or more inputs (a form's and its organization's are merged). */
export function compileList(...inputs: (SpamListInput | undefined | null)[]): SpamList {
  const emails = new Set<string>();
  const domains = new Set<string>();
  const keywords: string[] = [];
  let ips: net.BlockList | null = null;
  for (const input of inputs) {
    if (!input) continue;
    for (const e of input.emails ?? []) emails.add(norm(e));
    for (const d of input.domains ?? []) domains.add(norm(d).replace(/^@/, '').replace(/^\*\./, ''));
    for (const k of input.keywords ?? []) keywords.push(k);
    for (const ip of input.ips ?? []) {
      ips ??= new net.BlockList();
      addCidr(ips, ip);
    }
  }
  const set = phraseSet(keywords);
  return {
    emails,
    domains,
    ips,
    keywords: set,
    empty: emails.size === 0 && domains.size === 0 && ips === null && set.size === 0,
  };
}

/** Whether a domain or one of its parents is in the set (`mail.example.com` matches `example.com`). */
export function domainListed(domains: ReadonlySet<string>, domain: string): string | null {
  let d = domain;
  for (;;) {
    if (domains.has(d)) return d;
    const dot = d.indexOf('.');
    if (dot < 0) return null;
    d = d.slice(dot + 1);
  }
}

/** The first entry of the list that the submission matches, or null. */
export function listHit(list: SpamList, facts: ListFacts): ListHit | null {
  if (list.empty) return null;
  for (const email of facts.emails) {
    if (list.emails.has(email)) return { kind: 'email', value: email };
    const domain = domainListed(list.domains, email.slice(email.lastIndexOf('@') + 1));
    if (domain) return { kind: 'domain', value: domain };
  }
  if (list.ips && net.isIP(facts.ip)) {
    if (list.ips.check(facts.ip, net.isIPv6(facts.ip) ? 'ipv6' : 'ipv4')) return { kind: 'ip', value: facts.ip };
  }
  const keyword = list.keywords.find(facts.words);
  if (keyword !== null) return { kind: 'keyword', value: keyword };
  return null;
}

/** Problems of a list as written (for a 422 that names the bad entry); empty when it is fine. */
export function listProblems(input: SpamListInput, path: string): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  (input.ips ?? []).forEach((ip, i) => {
    if (!addCidr(new net.BlockList(), ip)) {
      problems.push({ path: `${path}.ips.${i}`, message: `"${ip}" is not an IP address or CIDR` });
    }
  });
  (input.emails ?? []).forEach((e, i) => {
    if (!/^[^\s@]+@[^\s@]+$/.test(e.trim())) {
      problems.push({ path: `${path}.emails.${i}`, message: `"${e}" is not an email address` });
    }
  });
  return problems;
}
