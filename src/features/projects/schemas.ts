import { Type } from 'typebox';
import { Text, Timestamp } from '../../http/schemas.js';

export const ProjectName = Text(1, 100, '1 to 100 characters; leading and trailing blanks are trimmed');

export const Project = Type.Object(
  {
    id: Type.String({ pattern: '^proj_', description: 'Prefixed with proj_' }),
    name: Type.String(),
    apiKey: Type.String({ description: 'The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer' }),
    logCount: Type.Integer({ minimum: 0, description: 'How many logs the project holds' }),
    storedBytes: Type.Integer({ minimum: 0, description: 'Bytes its logs and their indexes take on disk, kept current within a minute' }),
    role: Type.String({ enum: ['owner', 'admin', 'member'], description: 'The caller\'s role in the project' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const ProjectBody = Type.Object({ name: ProjectName }, { additionalProperties: false });
export const RotatedKey = Type.Object({ apiKey: Type.String({ description: 'The new full key; the old one no longer works' }) }, { additionalProperties: false });

const RoleName = Type.String({ enum: ['owner', 'admin', 'member'] });
const GrantableRole = Type.String({ enum: ['admin', 'member'], description: '`admin` or `member` (ownership moves only by a transfer)' });

export const Member = Type.Object(
  { userId: Type.String({ pattern: '^usr_' }), email: Type.String(), role: RoleName, joinedAt: Timestamp },
  { additionalProperties: false },
);
export const MemberParams = Type.Object({ id: Type.String({ maxLength: 100 }), userId: Type.String({ maxLength: 100 }) });
export const RoleBody = Type.Object({ role: GrantableRole }, { additionalProperties: false });
export const TransferBody = Type.Object({ userId: Type.String({ minLength: 1, maxLength: 100, description: 'An admin of the project' }) }, { additionalProperties: false });

export const Invitation = Type.Object(
  { id: Type.String({ pattern: '^inv_' }), email: Type.String(), role: RoleName, createdAt: Timestamp, expiresAt: Timestamp },
  { additionalProperties: false },
);
export const InvitationBody = Type.Object(
  { email: Type.String({ minLength: 3, maxLength: 254, description: 'Trimmed and lower-cased; only the account with this email can accept' }), role: GrantableRole },
  { additionalProperties: false },
);
export const InvitationParams = Type.Object({ id: Type.String({ maxLength: 100 }), invId: Type.String({ maxLength: 100 }) });
export const AcceptBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 512, description: 'The token from the mailed link' }) }, { additionalProperties: false });
export const Accepted = Type.Object({ project: Project }, { additionalProperties: false });
export const Notifications = Type.Object({ muted: Type.Boolean({ description: 'true: you get no alert notifications (email, push) of this project' }) }, { additionalProperties: false });
