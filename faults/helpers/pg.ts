import crypto from 'node:crypto';
import postgres from 'postgres';

/** The machine's shared PostgreSQL server; FAULTS_PG_URL overrides it (any database on the server to connect as admin). */
export const PG_ADMIN_URL = process.env.FAULTS_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A database of its own for one fault test on the shared server, created empty (the server
 * migrates it at start-up). `drop()` removes it, forcing out connections a killed process left.
 */
export async function freshDatabase(label: string) {
  const name = `formsvc_fault_${label}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    /** The same database reached through another host:port (a proxy in front of the server). */
    via(port: number) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async drop() {
      const a = postgres(PG_ADMIN_URL, { max: 1, onnotice: () => {}, connect_timeout: 10 });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end({ timeout: 5 });
      }
    },
  };
}
