import {
  body,
  createdOrExisting,
  deleteById,
  errors,
  getById,
  IdParam,
  IfExists,
  json,
  ListQuery,
  listOf,
  listPage,
  op,
  Timestamp,
  z,
} from './common.js';

export const Slug = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'lowercase letters, digits and single dashes');

export const Tags = z.array(z.string().min(1).max(64)).max(50);

export const Project = z
  .object({ id: z.string(), slug: z.string(), name: z.string(), tags: z.array(z.string()), created_at: Timestamp })
  .meta({ id: 'Project' });

export const CreateProjectBody = z
  .strictObject({
    name: z.string().min(1).max(200),
    slug: Slug.optional().meta({ description: 'default: derived from name' }),
    tags: Tags.optional(),
    if_exists: IfExists,
  })
  .meta({ id: 'CreateProjectBody' });

export const UpdateProjectBody = z
  .strictObject({ name: z.string().min(1).max(200).optional(), tags: Tags.optional() })
  .meta({ id: 'UpdateProjectBody' });

const tags = ['projects'];

export const projectOps = {
  list: listPage('read', listOf(Project, 'ProjectList'), {
    path: '/v1/projects',
    operationId: 'projects_list',
    tags,
    summary: 'List projects (folders for forms), newest first',
    query: ListQuery,
  }),
  create: op('manage', {
    method: 'post',
    path: '/v1/projects',
    operationId: 'projects_create',
    tags,
    summary: 'Create a project; idempotent by slug with if_exists: "return"',
    request: { body: body(CreateProjectBody) },
    responses: {
      ...createdOrExisting(Project, 'Existing project (if_exists: "return")'),
      ...errors('unauthorized', 'forbidden', 'validation_failed', 'conflict', 'idempotency_conflict'),
    },
  }),
  get: getById(Project, {
    path: '/v1/projects/{id}',
    operationId: 'projects_get',
    tags,
    summary: 'One project',
  }),
  update: op('manage', {
    method: 'patch',
    path: '/v1/projects/{id}',
    operationId: 'projects_update',
    tags,
    summary: "Rename or retag a project (the slug stays, so submit URLs and selectors don't move)",
    request: { params: IdParam, body: body(UpdateProjectBody) },
    responses: { 200: json(Project), ...errors('unauthorized', 'forbidden', 'not_found', 'validation_failed') },
  }),
  delete: deleteById({
    path: '/v1/projects/{id}',
    operationId: 'projects_delete',
    tags,
    summary: 'Delete an empty project (409 while it still holds forms)',
    also: ['conflict'],
  }),
};
