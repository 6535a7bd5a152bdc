import { describe, expect, it } from 'vitest';
import { cutHtml } from '../../server/worker/adapters/telegram.js';
import {
  escapeHtml,
  formatFields,
  formatValue,
  itemScope,
  renderTemplate,
  templateScope,
} from '../../server/worker/template.js';

const scope = {
  form: { id: 'fm_1', slug: 'contact', name: 'Contact' },
  submission: { id: 'sb_1', status: 'received', test: false, received_at: '2024-05-01T10:00:00.000Z' },
  data: {
    name: 'Ada',
    age: 36,
    subscribed: true,
    nothing: null,
    tags: ['a', 'b', 3],
    address: { city: 'London', zip: 'N1' },
    nested: { deep: { er: 'down here' } },
    list: [{ x: 1 }, 'y'],
    file: 'fl_abc123',
    'first name': 'Ada K.',
  },
  meta: { ip: '127.0.0.1' },
};

describe('renderTemplate', () => {
  it('substitutes dotted paths, with or without whitespace inside the braces', () => {
    expect(renderTemplate('{{form.name}} / {{ data.name }} / {{   submission.id   }}', scope)).toBe(
      'Contact / Ada / sb_1',
    );
    expect(renderTemplate('{{ data.nested.deep.er }}', scope)).toBe('down here');
    expect(renderTemplate('{{ data.first name }}', scope)).toBe('Ada K.');
  });

  it('renders missing paths, nulls and paths through scalars as the empty string', () => {
    expect(
      renderTemplate('[{{ data.missing }}][{{ nope.x.y }}][{{ data.nothing }}][{{ data.name.length }}]', scope),
    ).toBe('[][][][]');
    expect(renderTemplate('[{{ }}][{{ data..name }}][{{ . }}]', scope)).toBe('[][][]');
  });

  it('formats numbers, booleans, arrays and objects', () => {
    expect(renderTemplate('{{data.age}} {{data.subscribed}}', scope)).toBe('36 true');
    expect(renderTemplate('{{ data.tags }}', scope)).toBe('a, b, 3');
    expect(renderTemplate('{{ data.address }}', scope)).toBe('{"city":"London","zip":"N1"}');
    expect(renderTemplate('{{ data.list }}', scope)).toBe('{"x":1}, y');
    expect(renderTemplate('{{ data.tags.1 }} {{ data.tags.x }}', scope)).toBe('b ');
    expect(renderTemplate('{{ data.file }}', scope)).toBe('fl_abc123');
  });

  it('escapes substituted values only, never the template text', () => {
    const s = { data: { v: '<b>bold</b> & co' } };
    expect(renderTemplate('<i>{{ data.v }}</i>', s, escapeHtml)).toBe('<i>&lt;b&gt;bold&lt;/b&gt; &amp; co</i>');
    expect(renderTemplate('<i>{{ data.v }}</i>', s)).toBe('<i><b>bold</b> & co</i>');
  });

  it('does not substitute twice (a value that looks like a placeholder stays text)', () => {
    expect(renderTemplate('{{ data.v }}', { data: { v: '{{ form.secret }}' }, form: { secret: 'x' } })).toBe(
      '{{ form.secret }}',
    );
  });

  it('refuses prototype paths and never runs code', () => {
    const probes = [
      '{{constructor}}',
      '{{constructor.constructor}}',
      "{{constructor.constructor('return process')()}}",
      '{{ data.__proto__ }}',
      '{{ data.constructor.name }}',
      '{{ data.name.constructor.prototype }}',
      '{{ data.toString }}',
      '{{ data.hasOwnProperty }}',
      '{{ form.__proto__.polluted }}',
      '{{ data.tags.length }}',
      '{{ data.tags.map }}',
      '{{ process.env.HOME }}',
      '{{ this }}',
      '{{ 1+1 }}',
    ];
    for (const p of probes) expect(renderTemplate(p, scope), p).toBe('');
  });

  it('ignores own __proto__ and constructor keys that came in with the data', () => {
    const data = JSON.parse('{"__proto__": {"x": "leak"}, "constructor": "c", "ok": "fine"}');
    expect(renderTemplate('[{{ data.__proto__.x }}][{{ data.constructor }}][{{ data.ok }}]', { data })).toBe(
      '[][][fine]',
    );
  });

  it('does not walk into class instances or functions', () => {
    const s = { data: { when: new Date(0), fn: () => 'ran', map: new Map([['a', 1]]) } };
    expect(renderTemplate('[{{ data.when.getTime }}][{{ data.fn }}][{{ data.map.size }}]', s)).toBe('[][][]');
  });

  it('leaves text without placeholders alone, single braces included', () => {
    expect(renderTemplate('{ not } {{ a placeholder', scope)).toBe('{ not } {{ a placeholder');
  });
});

describe('helpers', () => {
  it('escapeHtml escapes the five characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('formatValue and formatFields list fields one per line', () => {
    expect(formatValue(undefined)).toBe('');
    expect(formatFields({ name: 'Ada', tags: ['a', 'b'], o: { k: 1 }, f: 'fl_1', n: null })).toBe(
      'name: Ada\ntags: a, b\no: {"k":1}\nf: fl_1\nn: ',
    );
    expect(formatFields({})).toBe('(no fields)');
  });

  it('templateScope and itemScope expose form, submission, data and meta', () => {
    const ctx = {
      form: { id: 'fm_1', slug: 'c', name: 'C', settings: { secret: 'x' } },
      submission: { id: 'sb_1', test: true },
      data: { a: 1 },
      meta: { ip: '::1' },
      subject_hint: null,
    };
    const s = templateScope(ctx);
    expect(s).toEqual({
      form: { id: 'fm_1', slug: 'c', name: 'C' },
      submission: { id: 'sb_1', test: true },
      data: { a: 1 },
      meta: { ip: '::1' },
    });
    expect(renderTemplate('{{ form.settings.secret }}', s)).toBe('');
    const item = itemScope(ctx, { id: 'sb_2', received_at: 't', data: { b: 2 }, meta: {} });
    expect(renderTemplate('{{submission.id}} {{submission.received_at}} {{data.b}} {{form.name}}', item)).toBe(
      'sb_2 t 2 C',
    );
  });
});

describe('cutHtml', () => {
  it('leaves short text alone', () => {
    expect(cutHtml('<b>x</b> &amp; y', 100)).toBe('<b>x</b> &amp; y');
  });

  it('never cuts inside an entity or a tag, and closes open tags', () => {
    const html = `<b>Title</b>\n<i>${'&amp;'.repeat(50)}</i>`;
    for (let max = 10; max < html.length; max += 1) {
      const out = cutHtml(html, max);
      expect(out.length, String(max)).toBeLessThanOrEqual(max);
      expect(out.endsWith('…') || out.endsWith('…</i>') || out.endsWith('…</b>'), out).toBe(true);
      // Every & starts a whole entity; every < starts a whole tag; tags balance.
      expect(out.replace(/&amp;/g, '')).not.toMatch(/&/);
      const tags = out.match(/<[^>]*>?/g) ?? [];
      for (const t of tags) expect(t).toMatch(/^<\/?[bi]>$/);
      expect((out.match(/<i>/g) ?? []).length).toBe((out.match(/<\/i>/g) ?? []).length);
      expect((out.match(/<b>/g) ?? []).length).toBe((out.match(/<\/b>/g) ?? []).length);
    }
  });

  it('does not split a surrogate pair', () => {
    const out = cutHtml('😀'.repeat(10), 6);
    expect(out).toBe('😀😀…');
  });
});
