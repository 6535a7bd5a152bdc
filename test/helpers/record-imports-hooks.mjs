import fs from 'node:fs';

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (process.env.RECORD_IMPORTS) fs.appendFileSync(process.env.RECORD_IMPORTS, `${result.url}\n`);
  return result;
}
