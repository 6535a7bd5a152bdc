import type { FC } from 'hono/jsx';
import { isObj, type Obj } from '../../../../shared/objects.js';
import { type Kind, submitterMail } from '../../../worker/adapters/submitter.js';

/** What the preview fills the templates with: a made-up submission. */
const SAMPLE = { name: 'Ada Lovelace', email: 'ada@example.org', message: 'Hello! <b>bold</b> stays text.' };

function preview(kind: Kind, own: Obj, form: { id: string; slug: string; name: string; settings: Obj }, base: string) {
  return submitterMail(
    kind,
    own,
    {
      deliveryId: 'preview',
      event: `submitter.${kind}`,
      payload: { type: `submitter.${kind}`, expires_at: kind === 'confirmation' ? '(the expiry)' : undefined },
      context: {
        form,
        submission: { id: 'sb_preview', status: 'received', test: false, received_at: new Date(0).toISOString() },
        data: SAMPLE,
        meta: { origin: 'https://www.example.org' },
        subject_hint: null,
        confirm_url: kind === 'confirmation' ? `${base}/c/…` : undefined,
      },
    },
    base,
  );
}

/**
 * Mail to the submitter (docs/submitter.md): the form's autoresponse and double opt-in mail as the
 * submitter would get them as saved, rendered with a sample submission. Edited in the settings form
 * above, or through the API, CLI or MCP (`settings.autoresponder`, `settings.confirm`); the text is
 * escaped like any other on the page.
 */
export const SubmitterMailCard: FC<{
  form: { id: string; slug: string; name: string; settings: Obj };
  base: string;
}> = ({ form, base }) => {
  const kinds = [
    { kind: 'autoresponder' as const, key: 'autoresponder', title: 'Autoresponder' },
    { kind: 'confirmation' as const, key: 'confirm', title: 'Double opt-in confirmation' },
  ];
  return (
    <section class="card" aria-labelledby="submitter-mail">
      <h2 id="submitter-mail">Mail to the submitter</h2>
      {kinds.map(({ kind, key, title }) => {
        const own = form.settings[key];
        if (!isObj(own) || own.enabled !== true) {
          return (
            <p>
              {title}: off. Turn it on in the settings above, or with <code>{`settings.${key}`}</code> through the API
              (see docs/submitter.md).
            </p>
          );
        }
        const mail = preview(kind, own, form, base);
        return (
          <>
            <h3>{title}: preview</h3>
            <p>
              Subject: <strong>{mail.subject}</strong>
              {mail.replyTo ? ` · Reply-To ${mail.replyTo}` : ''}
              {mail.fromName ? ` · From ${mail.fromName}` : ''}
            </p>
            <pre class="mono">{mail.text}</pre>
          </>
        );
      })}
    </section>
  );
};
