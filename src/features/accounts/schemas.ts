import { Type } from 'typebox';
import { Timestamp } from '../../http/schemas.js';
import { PLAN_NAMES, SUBSCRIPTION_STATUSES } from '../plans/plans.js';

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'Trimmed and lower-cased before it is stored or compared' });
export const NewPassword = Type.String({ minLength: 8, maxLength: 256, description: '8 to 256 characters, compared exactly as typed' });

export const User = Type.Object(
  {
    id: Type.String({ pattern: '^usr_', description: 'Prefixed with usr_' }),
    email: Type.String(),
    createdAt: Timestamp,
  },
  { additionalProperties: false },
);

export const Subscription = Type.Object(
  {
    plan: Type.String({ enum: [...PLAN_NAMES] }),
    status: Type.String({ enum: [...SUBSCRIPTION_STATUSES] }),
    periodEnd: Timestamp,
  },
  { additionalProperties: false },
);

export const Me = Type.Object(
  { id: Type.String({ pattern: '^usr_' }), email: Type.String(), createdAt: Timestamp, subscription: Subscription },
  { additionalProperties: false },
);

const AccessToken = Type.String({ description: 'A JWT, sent as `Authorization: Bearer <token>`; lasts ACCESS_TOKEN_EXPIRY (15m)' });
const RefreshToken = Type.String({ minLength: 1, maxLength: 512, description: 'Opaque and single-use; lasts REFRESH_TOKEN_EXPIRY (7d)' });

export const SignupBody = Type.Object({ email: Email, password: NewPassword }, { additionalProperties: false });
/** Login takes any strings up to the limits: a wrong-format email is simply wrong credentials. */
export const LoginBody = Type.Object(
  { email: Type.String({ minLength: 1, maxLength: 320 }), password: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
/** Refresh and logout: the token in the body, or (from the console) in the `loglane_refresh` cookie. */
export const RefreshBody = Type.Object(
  { refreshToken: Type.Optional({ ...RefreshToken, description: 'Required unless the `loglane_refresh` cookie carries it (the web console); send `{}` then' }) },
  { additionalProperties: false },
);

/** Present unless the request asked for the cookie transport (`X-Refresh-Token-Transport: cookie`). */
const IssuedRefreshToken = Type.Optional({ ...RefreshToken, description: 'Opaque and single-use; lasts REFRESH_TOKEN_EXPIRY (7d). Absent when the request sent `X-Refresh-Token-Transport: cookie`: the token is then set as the HttpOnly `loglane_refresh` cookie (Path=/v1/auth, SameSite=Strict) instead' });
export const SessionResponse = Type.Object({ user: User, accessToken: AccessToken, refreshToken: IssuedRefreshToken }, { additionalProperties: false });
export const TokenPairResponse = Type.Object({ accessToken: AccessToken, refreshToken: IssuedRefreshToken }, { additionalProperties: false });

export const TransportHeaders = Type.Object({
  'x-refresh-token-transport': Type.Optional(Type.String({ enum: ['cookie', 'body'], description: '`cookie` (the web console): the refresh token is set as an HttpOnly cookie and left out of the body' })),
});

const CurrentPassword = Type.String({ minLength: 1, maxLength: 256 });
export const ChangePasswordBody = Type.Object({ currentPassword: CurrentPassword, newPassword: NewPassword }, { additionalProperties: false });
export const ResetRequestBody = Type.Object({ email: Type.String({ minLength: 1, maxLength: 320 }) }, { additionalProperties: false });
export const ResetConfirmBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512, description: 'The token from the mailed link' }), newPassword: NewPassword },
  { additionalProperties: false },
);
export const DeleteAccountBody = Type.Object({ password: CurrentPassword }, { additionalProperties: false });
export const Accepted = Type.Object({}, { additionalProperties: false });

export const Session = Type.Object(
  {
    id: Type.String({ description: 'Prefixed with ses_ (logins made before sessions were listed keep their older rtf_ id)' }),
    createdAt: Timestamp,
    lastUsedAt: Timestamp,
    userAgent: Type.Union([Type.String(), Type.Null()]),
    ip: Type.Union([Type.String(), Type.Null()]),
    current: Type.Boolean({ description: 'The login whose access token made this request' }),
  },
  { additionalProperties: false },
);
