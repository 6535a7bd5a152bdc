import type { Rng, Slots } from './expand.js';

/** Names, addresses, hosts and amounts the templates draw from; made up, composed from parts. */

const FIRST = [
  'Anna',
  'James',
  'Maria',
  'David',
  'Sofia',
  'Liam',
  'Chloe',
  'Noah',
  'Emma',
  'Lucas',
  'Olivia',
  'Ethan',
  'Fatima',
  'Mateo',
  'Aisha',
  'Jonas',
  'Ingrid',
  'Pierre',
  'Camille',
  'Hiro',
  'Yuki',
  'Priya',
  'Ravi',
  'Tomasz',
  'Katarzyna',
  'Giulia',
  'Marco',
  'Sven',
  'Elena',
  'Omar',
  'Leila',
  'Kofi',
  'Ama',
  'Diego',
  'Lucia',
  'Sam',
  'Grace',
  'Ben',
  'Nora',
  'Felix',
  'Hannah',
  'Ivan',
  'Mei',
  'Wei',
  'Zanele',
  'Tariq',
  'Rosa',
  'Paul',
];
const LAST = [
  'Smith',
  'Garcia',
  'Müller',
  'Rossi',
  'Dubois',
  'Kowalski',
  'Tanaka',
  'Patel',
  'Okafor',
  'Johansson',
  'Novak',
  'Silva',
  'Nguyen',
  'Kim',
  'Hughes',
  'Fischer',
  'Moreau',
  'Lopez',
  'Ahmed',
  'Mensah',
  'Larsen',
  'Costa',
  'Brown',
  'Wright',
  'Schmidt',
  'Ivanova',
  'Chen',
  'Murphy',
  'Walsh',
  'Bianchi',
  'Haddad',
  'Sato',
];
const MAIL = ['gmail.com', 'outlook.com', 'yahoo.com', 'hotmail.com', 'icloud.com', 'proton.me', 'gmx.de', 'web.de'];
const BIZ_WORDS = [
  'north',
  'blue',
  'river',
  'oak',
  'bright',
  'stone',
  'harbor',
  'maple',
  'summit',
  'green',
  'cedar',
  'lumen',
  'pixel',
  'atlas',
  'urban',
  'vista',
  'nova',
  'forge',
  'field',
  'crest',
];
const BIZ_TAILS = ['studio', 'works', 'labs', 'design', 'media', 'consulting', 'bakery', 'dental', 'fitness', 'legal'];
const TLD = ['com', 'net', 'io', 'co.uk', 'de', 'fr', 'org', 'shop'];
const SPAM_SYL = [
  'rank',
  'boost',
  'seo',
  'link',
  'top',
  'pro',
  'best',
  'fast',
  'cash',
  'coin',
  'pill',
  'med',
  'loan',
  'easy',
  'win',
  'deal',
  'traffic',
  'click',
  'hot',
  'star',
  'max',
  'prime',
  'smart',
  'web',
  'digi',
  'mega',
  'ultra',
  'gold',
];
const SPAM_TLD = ['com', 'net', 'xyz', 'top', 'site', 'online', 'info', 'biz', 'ru', 'club', 'icu', 'live'];
const DISPOSABLE = ['mailinator.com', 'guerrillamail.com', 'yopmail.com', 'sharklasers.com', 'trashmail.com'];
const SPAM_NAMES = [
  'SEO Expert',
  'Mike',
  'Jennifer',
  'Crypto Support',
  'Admin',
  'Marketing Team',
  'Best Offer',
  'Alex',
  'Kate',
  'Robertmoomi',
  'Jamesbrott',
  'Helenzef',
  'Williamtaply',
  'CharlesKic',
  'Olivermix',
  'Davidhor',
  'Irinaben',
  'Web Design Team',
  'Billing Department',
  'Security Team',
  'Anastasia',
  'Nancy',
  'Eric Jones',
];
const CITY = ['Lisbon', 'Berlin', 'Leeds', 'Lyon', 'Austin', 'Porto', 'Kraków', 'Osaka', 'Toronto', 'Dublin', 'Ghent'];
const DAY = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTH = ['January', 'March', 'April', 'May', 'June', 'July', 'September', 'October', 'November', 'December'];
const PRODUCT = [
  'standing desk',
  'espresso machine',
  'yoga mat',
  'ceramic vase',
  'oak table',
  'wool blanket',
  'road bike',
  'gift card',
  'sourdough starter kit',
  'linen shirt',
  'planner',
  'walking boots',
  'teapot',
  'desk lamp',
];
const PILLS = ['Viagra', 'Cialis', 'Levitra', 'Tramadol', 'Xanax', 'Ambien', 'Phentermine', 'Modafinil', 'Kamagra'];
const COINS = ['Bitcoin', 'BTC', 'Ethereum', 'USDT', 'Solana', 'BNB', 'XRP', 'Dogecoin'];

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const bizDomain = (r: Rng) => `${r.pick(BIZ_WORDS)}${r.pick(BIZ_TAILS)}.${r.pick(TLD)}`;
/** A made-up host of the kind spam links to: new ones for every message, from a few syllables. */
const spamHost = (r: Rng) =>
  `${r.chance(0.2) ? `${r.pick(['www', 'go', 'best', 'get'])}.` : ''}${r.pick(SPAM_SYL)}${r.pick(SPAM_SYL)}${r.chance(0.4) ? r.int(1, 99) : ''}.${r.pick(SPAM_TLD)}`;
const path = (r: Rng) =>
  r.pick([
    '',
    '/',
    `/${r.pick(['offer', 'go', 'promo', 'ref', 'buy', 'order', 'p', 'landing', 'secure'])}${r.chance(0.5) ? `/${r.int(100, 99999)}` : ''}`,
    `/?ref=${r.int(1000, 9999)}`,
  ]);
const money = (r: Rng) =>
  r.pick([
    `$${r.int(2, 95) * 100}`,
    `$${r.int(1, 49)},${r.int(100, 999)}`,
    `€${r.int(5, 500)}`,
    `£${r.int(10, 900)}`,
    `${r.int(1, 20) * 500} USD`,
  ]);

export const SLOTS: Slots = {
  first: (r) => r.pick(FIRST),
  last: (r) => r.pick(LAST),
  full: (r) => `${r.pick(FIRST)} ${r.pick(LAST)}`,
  company: (r) => `${cap(r.pick(BIZ_WORDS))} ${cap(r.pick(BIZ_TAILS))}`,
  bizsite: (r) => `https://${bizDomain(r)}`,
  city: (r) => r.pick(CITY),
  day: (r) => r.pick(DAY),
  month: (r) => r.pick(MONTH),
  date: (r) => `${r.pick(MONTH)} ${r.int(1, 28)}`,
  time: (r) => r.pick(['9am', '10:30', '2pm', '4:15 pm', '18:00', 'noon', '7pm', '11am']),
  num: (r) => String(r.int(2, 12)),
  big: (r) => String(r.int(20, 900)),
  order: (r) => `${r.pick(['#', 'no. ', 'order ', ''])}${r.int(10000, 999999)}`,
  phone: (r) =>
    r.pick([
      `+44 7${r.int(100, 999)} ${r.int(100000, 999999)}`,
      `(${r.int(200, 989)}) ${r.int(200, 999)}-${r.int(1000, 9999)}`,
      `+49 151 ${r.int(1000000, 9999999)}`,
      `06 ${r.int(10, 99)} ${r.int(10, 99)} ${r.int(10, 99)} ${r.int(10, 99)}`,
    ]),
  product: (r) => r.pick(PRODUCT),
  price: (r) => r.pick([`$${r.int(9, 399)}`, `€${r.int(9, 399)}`, `£${r.int(9, 399)}`, `${r.int(9, 399)} EUR`]),
  pct: (r) => `${r.pick([10, 15, 20, 25, 30, 40, 50])}%`,
  money,
  pill: (r) => r.pick(PILLS),
  coin: (r) => r.pick(COINS),
  spamhost: spamHost,
  spamurl: (r) => `${r.chance(0.15) ? 'http' : 'https'}://${spamHost(r)}${path(r)}`,
  shorturl: (r) =>
    `https://${r.pick(['bit.ly', 'tinyurl.com', 'cutt.ly', 'rb.gy', 'is.gd'])}/${r.int(100000, 999999).toString(36)}`,
  /** The owner's own site, as a newsletter or a visitor mentions it. */
  ownurl: (r) =>
    `https://${r.pick(['www.', ''])}${r.pick(['harborbakery', 'northfieldyoga', 'cedarworkshop', 'lumenbooks', 'oakhouse-studio'])}.${r.pick(['com', 'co.uk', 'de'])}/${r.pick(['events', 'blog', 'shop', 'news', 'courses', 'menu', 'tickets', 'spring', 'sale', 'members'])}${r.chance(0.3) ? `/${r.int(2, 60)}` : ''}`,
  site: (r) => r.pick(['your website', 'your site', 'your page', 'your company website', 'your online store']),
  sitename: (r) => `${r.pick(BIZ_WORDS)}${r.pick(BIZ_TAILS)}.${r.pick(TLD)}`,
  kw: (r) =>
    r.pick([
      'dentist near me',
      'best bakery',
      'yoga classes',
      'family lawyer',
      'web design agency',
      'plumber',
      'coffee shop',
      'wedding photographer',
      'accounting services',
      'bookstore',
    ]),
};

/** A visitor's name and address: ordinary people at ordinary providers or their company's domain. */
export function honestSender(r: Rng): { name: string; email: string } {
  const first = r.pick(FIRST);
  const last = r.pick(LAST);
  const local = r.pick([
    `${first}.${last}`,
    `${first}${r.int(1, 99)}`,
    `${first.charAt(0)}${last}`,
    `${first}_${last}${r.int(70, 99)}`,
  ]);
  const domain = r.chance(0.7) ? r.pick(MAIL) : bizDomain(r);
  const name = r.chance(0.8) ? `${first} ${last}` : first;
  return {
    name,
    email: `${local}@${domain}`
      .toLowerCase()
      .normalize('NFD')
      .replace(/[\u0300-\u036f]/g, ''),
  };
}

/** A spammer's name and address: made-up names, throwaway, numbered or look-alike addresses. */
export function spamSender(r: Rng): { name: string; email: string } {
  const name = r.pick(SPAM_NAMES);
  const local = r.pick([
    `${name.toLowerCase().replace(/\s+/g, '')}${r.int(1, 9999)}`,
    `info`,
    `support`,
    `${r.pick(FIRST).toLowerCase()}${r.int(100, 99999)}`,
    `no-reply`,
    `${r.pick(SPAM_SYL)}${r.pick(SPAM_SYL)}`,
  ]);
  const domain = r.pick([
    () => r.pick(MAIL),
    () => r.pick(MAIL),
    () => r.pick(DISPOSABLE),
    () => spamHost(r),
    () => bizDomain(r),
  ])();
  return { name, email: `${local}@${domain}` };
}
