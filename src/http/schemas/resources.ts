// TypeBox shapes of the API's resources, mirroring src/services/views.ts (the serializer drops
// undeclared fields, so a field missing here would silently vanish from responses; the HTTP
// tests compare whole bodies to catch that).
import { Type } from 'typebox';
import { AppIdentity, CertType, NullableString, Platform, Timestamp } from './common.ts';

export const TaskStatus = Type.Union(
  ['pending', 'processing', 'succeeded', 'failed', 'canceled'].map((s) => Type.Literal(s)),
  { description: '`pending → processing → succeeded | failed | canceled`.' },
);

export const Upload = Type.Object(
  {
    file_key: Type.String({ description: 'Handle for POST /tasks/create: `tmp_` + 32 url-safe characters.' }),
    file_name: Type.String(),
    size: Type.Integer({ description: 'File size in bytes.' }),
    sha256: Type.String({ description: 'Lowercase hex SHA-256 of the file.' }),
    platform: Platform,
    app_id: NullableString('The app this package was grouped into.'),
    ...AppIdentity,
    created_at: Timestamp,
    expires_at: Type.String({ format: 'date-time', description: 'When the file_key stops working and the file is deleted.' }),
  },
  { additionalProperties: false },
);

export const WebhookDelivery = Type.Object(
  {
    event: Type.String(),
    attempt: Type.Integer(),
    outcome: Type.Union([Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('refused')], {
      description: '`refused`: the destination is a private, loopback or metadata address that SIGNET_OUTBOUND_ALLOW does not admit; nothing was sent.',
    }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: NullableString(),
    duration_ms: Type.Integer(),
    at: Timestamp,
  },
  { additionalProperties: false },
);

export const Task = Type.Object(
  {
    task_id: Type.String({ description: '`tsk_…`' }),
    status: TaskStatus,
    platform: Platform,
    cert_type: Type.String(),
    file_key: Type.String(),
    file_name: Type.String(),
    certificate_id: NullableString(),
    callback_url: NullableString(),
    app_id: NullableString(),
    app: Type.Object(AppIdentity, { additionalProperties: false }),
    attempts: Type.Integer({ description: 'Runs started so far (a run lost to a crash counts).' }),
    max_attempts: Type.Integer(),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }), Type.Null()], {
      description: 'Set when the task failed or was canceled; `code` is from the error catalogue.',
    }),
    artifact: Type.Union(
      [
        Type.Object(
          { size: Type.Integer({ description: 'Bytes.' }), sha256: Type.String(), download_url: Type.String() },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The signed package, once the task succeeded.' },
    ),
    verification: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'What the verifier checked on the signed output.' }),
    webhook_deliveries: Type.Array(WebhookDelivery, { description: 'Every delivery attempt of this task\'s webhooks, oldest first.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Type.Union([Timestamp, Type.Null()]),
    finished_at: Type.Union([Timestamp, Type.Null()]),
  },
  { additionalProperties: false },
);

export const CreateTaskBody = Type.Object(
  {
    file_key: Type.String({ minLength: 1, description: 'From POST /apps/upload.' }),
    cert_type: CertType,
    certificate_id: Type.Optional(Type.String({ minLength: 1, description: 'Default: the account\'s newest certificate of the right kind.' })),
    callback_url: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2048, description: 'Receives `task.succeeded` / `task.failed`.' })),
  },
  { additionalProperties: false },
);

export const CreatedTask = Type.Object({ task_id: Type.String(), status: TaskStatus }, { additionalProperties: false });

export const TaskList = Type.Object(
  {
    items: Type.Array(Task),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null on the last page.' }),
  },
  { additionalProperties: false },
);

export const Certificate = Type.Object(
  {
    id: Type.String({ description: '`crt_…`' }),
    kind: Type.Union([Type.Literal('ios_enterprise'), Type.Literal('android')]),
    name: NullableString(),
    subject: NullableString('Subject of the signing certificate.'),
    team_id: NullableString('Apple team id (iOS), or the certificate\'s OU.'),
    fingerprint: Type.String({ description: 'Lowercase hex SHA-256 of the certificate (DER).' }),
    alias: NullableString('Keystore alias (Android).'),
    not_before: Type.Union([Timestamp, Type.Null()]),
    not_after: Type.Union([Timestamp, Type.Null()]),
    profile: Type.Union(
      [
        Type.Object(
          { name: NullableString(), app_id: NullableString(), type: NullableString(), expires_at: Type.Union([Timestamp, Type.Null()]) },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'The provisioning profile (iOS).' },
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AppSummary = Type.Object(
  {
    app_id: Type.String({ description: '`app_…`' }),
    platform: Platform,
    bundle_id: Type.String(),
    name: NullableString(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);

export const AppDetail = Type.Object(
  { ...AppSummary.properties, uploads: Type.Array(Upload, { description: 'Newest first.' }), tasks: Type.Array(Task, { description: 'Newest first.' }) },
  { additionalProperties: false },
);

export const IdParam = (name: string, description: string) => Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 100, description }) });
