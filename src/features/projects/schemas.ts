import { Type } from 'typebox';
import { Text, Timestamp } from '../../http/schemas.js';

export const ProjectName = Text(1, 100, '1 to 100 characters; leading and trailing blanks are trimmed');

export const Project = Type.Object(
  {
    id: Type.String({ pattern: '^proj_', description: 'Prefixed with proj_' }),
    name: Type.String(),
    apiKey: Type.String({ description: 'The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer' }),
    logCount: Type.Integer({ minimum: 0, description: 'How many logs the project holds' }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);

export const ProjectBody = Type.Object({ name: ProjectName }, { additionalProperties: false });
export const RotatedKey = Type.Object({ apiKey: Type.String({ description: 'The new full key; the old one no longer works' }) }, { additionalProperties: false });
