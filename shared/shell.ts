/**
 * POSIX shell quoting for the command lines the service writes for people to paste (the verify
 * curl, export and claim commands): the value in single quotes, each `'` written `'\''`, so no
 * value (a URL, a header, a body, an id) can end the quote and run something.
 */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** As shellQuote, but a word of only safe characters stays bare (easier to read). */
export function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : shellQuote(value);
}
