import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ops } from '../shared/contracts/index.js';
import { shellWord as shellQuote } from '../shared/shell.js';
import type { ToolRun } from './context.js';
import { DRAFT_07, type JsonSchema, outputSchemaOf } from './json-schema.js';
import { errorResult, okResult } from './results.js';
import type { OperationTool, ResponseDef } from './tools.js';

/** Rows a preview shows: enough to see the fields, small enough for an agent's context. */
export const PREVIEW_ROWS = 5;

/**
 * forms_export as a tool: an export can be a million rows, which belong in a file, not in an
 * agent's context. The tool answers the first rows (the list with the same filters) and the
 * commands that download the whole export (CLI and curl) for the agent to run or hand on.
 */
export async function exportPreview(
  tool: OperationTool,
  args: Record<string, unknown>,
  run: ToolRun,
): Promise<CallToolResult> {
  const parts = tool.split(args);
  const id = parts.params.id;
  if (!id) {
    return errorResult(
      {
        code: 'validation_failed',
        message: 'Missing id.',
        hint: 'Pass the form id (fm_…); forms_list lists them.',
        details: { issues: [{ path: 'id', message: 'required' }] },
      },
      422,
    );
  }
  const { format = 'csv', ...filters } = parts.query as Record<string, string | undefined>;
  const given = Object.entries(filters).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== '');
  const res = await run.client.call(ops.submissions.formList, {
    params: { id },
    query: { ...Object.fromEntries(given), limit: PREVIEW_ROWS } as never,
    signal: run.signal,
  });
  if (res.error) return errorResult(res.error, res.status, res.requestId);
  if (format !== 'csv' && format !== 'ndjson') {
    return errorResult(
      {
        code: 'validation_failed',
        message: `format must be csv or ndjson, not "${format}".`,
        hint: 'Pass format "csv" (spreadsheets) or "ndjson" (one JSON object per line).',
        details: { issues: [{ path: 'format', message: 'csv or ndjson' }] },
      },
      422,
    );
  }
  const query = new URLSearchParams([['format', format], ...given]).toString();
  const path = tool.operation.path.replace('{id}', encodeURIComponent(id));
  const url = `${run.ctx.baseUrl}${path}?${query}`;
  const file = `${id}.${format}`;
  const flags = given.map(([k, v]) => ` --${k} ${shellQuote(v)}`).join('');
  const download = {
    cli: `formsvc forms export ${shellQuote(id)} --format ${format}${flags} > ${shellQuote(file)}`,
    curl: `curl -fsS -H "Authorization: Bearer $FORMSVC_API_KEY" -o ${shellQuote(file)} ${shellQuote(url)}`,
    url,
  };
  const list = res.data as { data: unknown[]; next_cursor: string | null };
  const more = list.next_cursor !== null;
  const summary =
    `forms_export: the first ${list.data.length} row${list.data.length === 1 ? '' : 's'}` +
    `${more ? ' (there are more)' : ''}. Download the whole ${format.toUpperCase()} with: ${download.cli}`;
  return okResult(summary, { first_rows: list.data, more, download });
}

/** What the preview answers (structuredContent), instead of the CSV or NDJSON the operation streams. */
export const EXPORT_PREVIEW_SCHEMA: JsonSchema = {
  $schema: DRAFT_07,
  type: 'object',
  description: 'The first rows of the export and the commands that download all of it.',
  properties: {
    first_rows: {
      ...firstRowsSchema(),
      description: `at most ${PREVIEW_ROWS} submissions, as forms_submissions answers them with the same filters`,
    },
    more: { type: 'boolean', description: 'whether the export has more rows than first_rows' },
    download: {
      type: 'object',
      properties: {
        cli: { type: 'string', description: 'a formsvc CLI line that writes the whole export to a file' },
        curl: { type: 'string', description: 'the same with curl and $FORMSVC_API_KEY' },
        url: { type: 'string', description: 'the export URL with the format and filters' },
      },
      required: ['cli', 'curl', 'url'],
    },
  },
  required: ['first_rows', 'more', 'download'],
};

function firstRowsSchema(): JsonSchema {
  const page = (ops.submissions.formList.responses as Record<number, ResponseDef>)[200];
  const schema = outputSchemaOf(page.content?.['application/json']?.schema);
  const rows = schema.properties?.data;
  if (!rows) throw new Error('forms_submissions answers no data array: EXPORT_PREVIEW_SCHEMA needs another source');
  return rows;
}
