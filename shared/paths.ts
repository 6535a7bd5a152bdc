/**
 * An operation's path with its `{name}` parameters filled in, URL-encoded: the one path builder of
 * the client, the MCP server and the hints that quote a route. A parameter not given is a
 * programming error (it throws), unless `keepMissing`: then it stays `{name}`, as a hint shows the
 * route's shape.
 */
export function buildPath(
  path: string,
  params: Record<string, string | number | undefined> = {},
  opts: { keepMissing?: boolean } = {},
): string {
  return path.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const v = params[name];
    if (v !== undefined && v !== null && v !== '') return encodeURIComponent(String(v));
    if (opts.keepMissing) return whole;
    throw new Error(`missing path parameter "${name}" for ${path}`);
  });
}
