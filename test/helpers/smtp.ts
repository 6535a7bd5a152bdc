import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface SinkMail {
  to: string[];
  parsed: ParsedMail;
  subject: string;
  text: string;
  html: string;
}

/**
 * A real SMTP server on loopback that keeps every message (tests never send mail elsewhere).
 * `reject` (given here, or later through `refuse`) answers a recipient with 550, as a receiving
 * server refusing a mailbox does.
 */
export async function startSmtpSink(opts: { reject?: (to: string) => boolean } = {}) {
  const messages: SinkMail[] = [];
  let reject = opts.reject;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (reject?.(address.address.toLowerCase())) {
        const err = new Error('mailbox unavailable') as Error & { responseCode: number };
        err.responseCode = 550;
        cb(err);
        return;
      }
      cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((parsed) => {
          messages.push({
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            parsed,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
          });
          cb();
        })
        .catch(cb);
    },
  });
  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port));
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(pred: (m: SinkMail) => boolean, timeoutMs = 5000): Promise<SinkMail> {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const hit = messages.find(pred);
        if (hit) return hit;
        if (Date.now() > until) throw new Error('no matching mail at the SMTP sink');
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    /** Refuses the recipients `pred` names from now on (null: accepts all again). */
    refuse(pred: ((to: string) => boolean) | null) {
      reject = pred ?? undefined;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
