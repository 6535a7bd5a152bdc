import { describe, expect, it } from 'vitest';
import { corpusLine, mboxMessages } from '../../scripts/mbox-to-jsonl.js';

const MBOX = [
  'From someone@example.com Mon Jan  1 00:00:00 2024',
  'From: "Ana Silva" <ana@example.com>',
  'Subject: =?utf-8?B?T2zDoSE=?= about the',
  ' booking',
  'Content-Type: text/plain; charset=utf-8',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  'Can we book a table for four at 8 =E2=82=AC30 per person?',
  '>From the terrace, ideally.',
  '',
  'From bulk@spam.example Mon Jan  1 00:00:01 2024',
  'From: offers@spam.example',
  'Subject: Cheap pills',
  'Content-Type: multipart/alternative; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/html',
  '',
  '<p>HTML <b>only</b></p>',
  '--b1',
  'Content-Type: text/plain',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('Buy now at https://pills.example').toString('base64'),
  '--b1--',
  '',
].join('\n');

describe('mbox to a spam-eval corpus', () => {
  it('takes the subject and the plain text as message, the From as email and name', () => {
    const [a, b] = mboxMessages(MBOX).map((m) => corpusLine(m, 'ham', 'train'));
    expect(a).toEqual({
      class: 'ham',
      name: 'Ana Silva',
      email: 'ana@example.com',
      message:
        'Olá! about the booking\n\nCan we book a table for four at 8 €30 per person?\nFrom the terrace, ideally.',
      split: 'train',
    });
    expect(b.email).toBe('offers@spam.example');
    expect(b).not.toHaveProperty('name');
    expect(b.message).toBe('Cheap pills\n\nBuy now at https://pills.example');
  });
});
