/**
 * Where a client's server and API key come from: flags, then the environment (FORMSVC_API_KEY,
 * FORMSVC_BASE_URL, FORMSVC_PROFILE), then the profile file written by `formsvc login`
 * (default ~/.config/formsvc/profiles.json, FORMSVC_CONFIG overrides; written 0600).
 *
 * A profile's key is only used against the server it was issued by: when the base URL comes from
 * a flag or the environment and names another server, the key is left out (and `note` says why),
 * so a key never travels to a server it was not made for.
 *
 * Node-only: node:fs/os/path are imported lazily, so shared/client.ts itself stays loadable anywhere.
 */

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8787';

export interface Profile {
  base_url: string;
  api_key: string;
  email?: string;
  organization?: { id: string; slug?: string; name?: string };
  key_id?: string;
  saved_at?: string;
}

export interface ProfilesFile {
  /** the profile used when none is named */
  current?: string;
  profiles: Record<string, Profile>;
}

export interface ResolvedConfig {
  baseUrl: string;
  apiKey: string | undefined;
  /** the profile name consulted */
  profile: string;
  configPath: string;
  source: { baseUrl: 'flag' | 'env' | 'profile' | 'default'; apiKey: 'flag' | 'env' | 'profile' | null };
  /** why a saved key was not used, if it was not */
  note?: string;
}

type Env = Record<string, string | undefined>;

/**
 * A base URL as one spelling: scheme and host in lower case (URL does that), no default port, no
 * trailing slash. A string that is not a URL is only trimmed (setup() then names it).
 */
export function normalizeBaseUrl(u: string): string {
  const trimmed = u.trim();
  try {
    const url = new URL(trimmed);
    return `${url.protocol}//${url.host}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return trimmed.replace(/\/+$/, '');
  }
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether two base URLs name one server: the same after normalising, with localhost, 127.0.0.1
 * and [::1] taken as one host (a key saved against one loopback spelling works with the others).
 */
export function sameServer(a: string, b: string): boolean {
  const key = (u: string) => {
    const n = normalizeBaseUrl(u);
    try {
      const url = new URL(n);
      if (LOOPBACK.has(url.hostname)) url.hostname = 'localhost';
      return normalizeBaseUrl(url.href);
    } catch {
      return n;
    }
  };
  return key(a) === key(b);
}

const norm = normalizeBaseUrl;

/** The profile file's path: FORMSVC_CONFIG, else $XDG_CONFIG_HOME/formsvc or ~/.config/formsvc. */
export async function profilesPath(env: Env = process.env): Promise<string> {
  if (env.FORMSVC_CONFIG) return env.FORMSVC_CONFIG;
  const [os, path] = await Promise.all([import('node:os'), import('node:path')]);
  const base = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'formsvc', 'profiles.json');
}

/** The profile file (empty when it does not exist; a broken file is an error naming its path). */
export async function readProfiles(file: string): Promise<ProfilesFile> {
  const fs = await import('node:fs/promises');
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as ProfilesFile;
    return { current: parsed.current, profiles: parsed.profiles ?? {} };
  } catch {
    throw new Error(`${file} is not valid JSON; fix or delete it, then run formsvc login again`);
  }
}

async function writeProfiles(file: string, data: ProfilesFile) {
  const [fs, path] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  // Write-then-rename so a crash never leaves half a file; 0600 because it holds API keys.
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  await fs.chmod(tmp, 0o600);
  await fs.rename(tmp, file);
}

/** Saves (or replaces) one named profile and makes it the current one. */
export async function saveProfile(file: string, name: string, profile: Profile): Promise<void> {
  const data = await readProfiles(file);
  data.profiles[name] = { ...profile, base_url: norm(profile.base_url), saved_at: new Date().toISOString() };
  data.current = name;
  await writeProfiles(file, data);
}

/** Removes one named profile; answers whether it existed. */
export async function removeProfile(file: string, name: string): Promise<boolean> {
  const data = await readProfiles(file);
  if (!data.profiles[name]) return false;
  delete data.profiles[name];
  if (data.current === name) data.current = Object.keys(data.profiles)[0];
  await writeProfiles(file, data);
  return true;
}

/** Resolves base URL and API key: flags, then env, then the profile, then the local default server. */
export async function resolveConfig(
  flags: { baseUrl?: string; apiKey?: string; profile?: string } = {},
  env: Env = process.env,
): Promise<ResolvedConfig> {
  const configPath = await profilesPath(env);
  const file = await readProfiles(configPath);
  const profile = flags.profile || env.FORMSVC_PROFILE || file.current || 'default';
  const saved = file.profiles[profile];

  let baseUrl = DEFAULT_BASE_URL;
  let baseSource: ResolvedConfig['source']['baseUrl'] = 'default';
  if (flags.baseUrl) [baseUrl, baseSource] = [flags.baseUrl, 'flag'];
  else if (env.FORMSVC_BASE_URL) [baseUrl, baseSource] = [env.FORMSVC_BASE_URL, 'env'];
  else if (saved?.base_url) [baseUrl, baseSource] = [saved.base_url, 'profile'];
  baseUrl = norm(baseUrl);

  let apiKey: string | undefined;
  let keySource: ResolvedConfig['source']['apiKey'] = null;
  let note: string | undefined;
  if (flags.apiKey) [apiKey, keySource] = [flags.apiKey, 'flag'];
  else if (env.FORMSVC_API_KEY) [apiKey, keySource] = [env.FORMSVC_API_KEY, 'env'];
  else if (saved?.api_key) {
    if (sameServer(saved.base_url, baseUrl)) [apiKey, keySource] = [saved.api_key, 'profile'];
    else note = `profile "${profile}" holds a key for ${saved.base_url}, not ${baseUrl}`;
  }
  return { baseUrl, apiKey, profile, configPath, source: { baseUrl: baseSource, apiKey: keySource }, note };
}
