import type { Transporter } from 'nodemailer';
import type { Config, MailTransport } from './config.js';

export interface MailMessage {
  to: string[];
  cc?: string[];
  subject: string;
  text: string;
  html?: string;
  replyTo?: string;
  fromName?: string;
}

export interface MailResult {
  ok: boolean;
  messageId?: string;
  response?: string;
  error?: string;
}

export interface Mailer {
  transport: MailTransport;
  /** Never throws: failures come back as {ok: false, error}. */
  send(msg: MailMessage): Promise<MailResult>;
  close(): void;
}

/** nodemailer to SMTP_URL, or standard output with MAIL_TRANSPORT=console, or nothing with none. */
export function createMailer(
  config: Config,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Mailer {
  const from = config.mailFrom;
  if (config.mailTransport === 'smtp') {
    const smtpUrl = config.smtpUrl;
    if (!smtpUrl) throw new Error('MAIL_TRANSPORT=smtp needs SMTP_URL');
    // nodemailer (about 2 MB) is loaded with the first message: most processes send none for hours.
    let transporter: Promise<Transporter> | null = null;
    const open = () => {
      transporter ??= import('nodemailer').then(({ default: nodemailer }) =>
        nodemailer.createTransport({
          url: smtpUrl,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 20_000,
        } as Parameters<typeof nodemailer.createTransport>[0]),
      );
      return transporter;
    };
    return {
      transport: 'smtp',
      async send(msg) {
        try {
          const info = await (await open()).sendMail({
            from: withName(from, msg.fromName),
            to: msg.to,
            cc: msg.cc?.length ? msg.cc : undefined,
            subject: msg.subject,
            text: msg.text,
            html: msg.html,
            replyTo: msg.replyTo,
          });
          return { ok: true, messageId: info.messageId, response: String(info.response ?? '') };
        } catch (err) {
          return { ok: false, error: (err as Error).message };
        }
      },
      close: () => void transporter?.then((t) => t.close()),
    };
  }
  if (config.mailTransport === 'console') {
    return {
      transport: 'console',
      async send(msg) {
        out(`--- mail (MAIL_TRANSPORT=console) to ${msg.to.join(', ')}: ${msg.subject}\n${msg.text}\n--- end of mail`);
        return { ok: true, messageId: 'console' };
      },
      close() {},
    };
  }
  return {
    transport: 'none',
    async send() {
      return { ok: false, error: 'mail sending is not configured (MAIL_TRANSPORT=none)' };
    },
    close() {},
  };
}

/** "Forms <forms@x>" with another display name. */
function withName(from: string, name?: string): string {
  if (!name) return from;
  const addr = /<([^>]+)>/.exec(from)?.[1] ?? from;
  return `"${name.replace(/["\\\r\n]/g, '')}" <${addr}>`;
}
