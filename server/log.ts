import { pino } from 'pino';

export type Logger = pino.Logger;

/** Structured JSON logs; credentials and secrets are redacted wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    level,
    base: { svc: 'formsvc' },
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'headers.authorization',
        'headers.cookie',
        'api_key',
        '*.api_key',
        'code',
        '*.code',
        'secret',
        '*.secret',
        'bot_token',
        '*.bot_token',
        'token',
        '*.token',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}
