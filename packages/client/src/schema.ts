/**
 * The Loglane API's types, generated from the OpenAPI document the server serves
 * (GET /v1/openapi.json) by `npm run gen:client`. Do not edit: change the route declarations in
 * src/ and regenerate. A test fails when this file and the served document disagree.
 */
/* eslint-disable */
export interface paths {
    "/v1/auth/signup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create an account
         * @description Creates an account on DEFAULT_PLAN and signs it in. Emails are unique, compared case-insensitively. One client address (an IPv6 client's /64) creates at most SIGNUP_MAX_PER_IP accounts per SIGNUP_WINDOW; past that, 429 with Retry-After until the window passes. A refused sign-up (such as a taken email) does not count. With `X-Refresh-Token-Transport: cookie` (the web console), the refresh token is set as the HttpOnly, SameSite=Strict `loglane_refresh` cookie scoped to /v1/auth and left out of the body.
         */
        post: operations["signup"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign in
         * @description Unknown email and wrong password answer the same 401. After LOGIN_MAX_ATTEMPTS failures for one email within LOGIN_WINDOW (or LOGIN_MAX_ATTEMPTS_PER_IP from one address), logins answer 429 with Retry-After until the window passes. With `X-Refresh-Token-Transport: cookie` (the web console), the refresh token is set as the HttpOnly, SameSite=Strict `loglane_refresh` cookie scoped to /v1/auth and left out of the body.
         */
        post: operations["login"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/refresh": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Trade a refresh token for a new token pair
         * @description Refresh tokens are single-use. Presenting one that was already used revokes every token of that login (reuse detection, RFC 9700 §4.14.2); concurrent refreshes with one token count as reuse. The token comes from the body or, when the body has none, from the `loglane_refresh` cookie; a token from the cookie is replaced in the cookie, and a refused one clears it. With `X-Refresh-Token-Transport: cookie` (the web console), the refresh token is set as the HttpOnly, SameSite=Strict `loglane_refresh` cookie scoped to /v1/auth and left out of the body.
         */
        post: operations["refresh"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Sign out
         * @description Revokes the login the refresh token belongs to. Answers 204 whether or not it was still valid, and never touches another user's tokens. Access tokens already issued stay valid until they expire (ACCESS_TOKEN_EXPIRY). The token comes from the body or, when the body has none, from the `loglane_refresh` cookie, which the answer clears.
         */
        post: operations["logout"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signed-in user and their subscription */
        get: operations["me"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/password": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Change your password
         * @description Every other login of the account ends (its refresh token fails); this one stays. Access tokens already issued stay valid until they expire. A wrong current password is 401 INVALID_CREDENTIALS, and counts against the login throttle.
         */
        post: operations["changePassword"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/password-reset": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mail a password reset link
         * @description Answers 202 `{}` whether or not the email has an account. An account gets a mail with `<PUBLIC_URL>/reset-password#token=<token>`, good once for 30 minutes. Requests are throttled per email and per address like logins, on their own counter.
         */
        post: operations["requestPasswordReset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/password-reset/confirm": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Set a new password with a reset token
         * @description Every login of the account ends. An unknown, used or expired token is 400 VALIDATION_ERROR at /token; a body refused by its schema does not use the token.
         */
        post: operations["confirmPasswordReset"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/sessions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Your logins
         * @description One per signup or login that can still refresh, newest first; `lastUsedAt` moves on each refresh.
         */
        get: operations["listSessions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/sessions/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Sign out one login
         * @description That login's refresh token then fails with INVALID_REFRESH_TOKEN, and its live tails end.
         */
        delete: operations["revokeSession"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Delete your account for good
         * @description Needs the password. The account, the projects it owns with everything in them, its push subscriptions, logins and memberships are deleted; its access tokens answer 401 at once; the email can sign up again.
         */
        delete: operations["deleteAccount"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/plans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The plans and their limits
         * @description Smallest plan first. Limits count projects per user and alert rules per project; null is unlimited.
         */
        get: operations["listPlans"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List the projects you own or are a member of (API keys masked) */
        get: operations["listProjects"];
        put?: never;
        /**
         * Create a project
         * @description Answers the project with its full API key. Refused with 403 PLAN_LIMIT_EXCEEDED beyond the plan's project cap.
         */
        post: operations["createProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One project, with its full API key */
        get: operations["getProject"];
        /** Rename a project */
        put: operations["updateProject"];
        post?: never;
        /**
         * Delete a project and everything in it
         * @description Irreversible: the project, its logs, alert rules and alert history are deleted in one transaction.
         */
        delete: operations["deleteProject"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/rotate-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace the project's API key
         * @description The old key is refused from the moment this answers, on every node.
         */
        post: operations["rotateProjectKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The project's members, the owner first */
        get: operations["listMembers"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/members/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /** Change a member's role (owner only) */
        put: operations["setMemberRole"];
        post?: never;
        /**
         * Remove a member, or leave (your own user id)
         * @description Admins remove members, only the owner removes admins; anyone but the owner may leave (the owner transfers first: 400 at /userId). The removed user's live tails of the project end at once.
         */
        delete: operations["removeMember"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/transfer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Hand the project to one of its admins (owner only)
         * @description You become an admin. A non-member is 404, a plain member 400 at /userId. Allowed past the new owner's project cap.
         */
        post: operations["transferProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/invitations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Pending invitations (admin) */
        get: operations["listInvitations"];
        put?: never;
        /**
         * Invite someone by email
         * @description Admins invite members; only the owner invites admins. The mail holds `<PUBLIC_URL>/invitations#token=<token>`, good once for 7 days, for that email only. A project sends at most 20 invitations an hour (429 with Retry-After).
         */
        post: operations["createInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/invitations/{invId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a pending invitation (admin; an admin invitation: owner) */
        delete: operations["revokeInvitation"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/invitations/accept": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Join a project with an invitation
         * @description Signed in with the invited email. An unknown, used, expired or other-email token is 404, and the invitation stays pending. A member already keeps their role.
         */
        post: operations["acceptInvitation"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/notifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Whether you muted the project's alert notifications */
        get: operations["getProjectNotifications"];
        /** Mute or unmute the project's alert notifications for you */
        put: operations["setProjectNotifications"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send logs
         * @description Authenticated by the project API key in `X-API-Key` or `Authorization: Bearer`. Answers 202 once the accepted logs are durably stored; logs that fail their checks are listed in `rejected` and cost the others nothing. Every log bad → 400. Over the plan's ingest rate → 429 RATE_LIMITED; overload → 503 OVERLOADED; both with Retry-After. With `Idempotency-Key` (up to 255 characters) a retry of the same body within 24 hours gets the first answer (header `Idempotent-Replayed: true`) and stores nothing again; the same key with another body → 422; while the first is still in flight → 409.
         */
        post: operations["ingestLogs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/otlp/v1/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * OpenTelemetry logs (OTLP/HTTP)
         * @description An OTLP ExportLogsServiceRequest in protobuf (`application/x-protobuf`) or JSON (`application/json`), optionally gzip-compressed, with the project API key in `X-API-Key` (or `Authorization: Bearer`). Mapping: severityNumber (or severityText) → level; body → message; resource attribute `service.name` → source; timeUnixNano (else observedTimeUnixNano) → timestamp; attributes → metadata, with `resource`, `scope`, `traceId`, `spanId` beside them. Answers 200 with an ExportLogsServiceResponse in the request's encoding once the accepted records are stored; refused records are counted in `partialSuccess`. 429 and 503 carry Retry-After and are retryable, as the OTLP specification says; 400, 401 and 413 are not. Error bodies use Loglane's JSON error shape.
         */
        post: operations["otlpExportLogs"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search a project's logs, newest first
         * @description Filters combine with AND. `nextCursor` continues the walk without repeating or skipping a log while new ones arrive. A `pattern` search that runs out of its time budget answers what it found so far and a cursor to continue from. The page is streamed as it is read; a user runs at most 2 searches at once, more wait up to 10 s and then get 429 RATE_LIMITED with Retry-After.
         */
        get: operations["searchLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Log counts per time bucket and level, for charts
         * @description Default range: the last 24 hours. Buckets start at multiples of the interval since the epoch; empty buckets are included. A user runs at most 2 of stats, facets, fields and context at once; more wait up to 10 s and then get 429 RATE_LIMITED with Retry-After. The read stops when its client disconnects. A database too busy to answer within the budget is 503 OVERLOADED with Retry-After.
         */
        get: operations["logStats"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs/facets": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Counts of fields' values over the whole range and query
         * @description For each field, the `limit` most frequent values (ties by name; the same names and counts stats' groupBy gives), the logs with another value (`other`) and without the field (`none`), and the statistics of its numbers (JSON numbers only; percentiles from a uniform sample of 10,000 past that many). With `measure`, each named value also gets p50 and p95 of that numeric path among its logs. Default range: the last 24 hours. Counted in the app within QUERY_TIME_BUDGET. A user runs at most 2 of stats, facets, fields and context at once; more wait up to 10 s and then get 429 RATE_LIMITED with Retry-After. The read stops when its client disconnects. A database too busy to answer within the budget is 503 OVERLOADED with Retry-After.
         */
        get: operations["logFacets"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs/fields": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The fields the selected logs hold, most common first
         * @description level, source (when any log has one) and the path of every metadata leaf (`@req.url`, odd keys quoted: `@"user agent"`), with the number of logs holding each; at most 200. Default range: the last 24 hours. Read in the app within QUERY_TIME_BUDGET. A user runs at most 2 of stats, facets, fields and context at once; more wait up to 10 s and then get 429 RATE_LIMITED with Retry-After. The read stops when its client disconnects. A database too busy to answer within the budget is 503 OVERLOADED with Retry-After.
         */
        get: operations["logFields"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs/{logId}/context": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The logs around one log
         * @description The nearest logs by timestamp (then id) on each side of the log: `before` newest first, `after` oldest first. With `query`, only the logs it selects (e.g. `source:api` or `@reqId:abc`); the log itself is always answered. An unknown log id, or one of another project, is 404. The whole read runs within QUERY_TIME_BUDGET. A user runs at most 2 of stats, facets, fields and context at once; more wait up to 10 s and then get 429 RATE_LIMITED with Retry-After. The read stops when its client disconnects. A database too busy to answer within the budget is 503 OVERLOADED with Retry-After.
         */
        get: operations["logContext"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs/export": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Every log a search selects, as NDJSON or CSV
         * @description Streams every matching log, newest first, with no cap on their number, as a download. NDJSON: one Log per line. CSV (RFC 4180): a header row of `columns` as asked, then a row per log; a value that is an object or an array is written as JSON, a missing one as an empty field; a cell that begins with =, +, -, @, a tab or a carriage return is written with a leading `'` so that a spreadsheet does not run it as a formula (`raw=true` writes cells as they are). The stream runs as long as the client reads it and its access lasts: it is cut off (ended without its last chunk) once the user is no longer a member, the project is deleted, the login ends (logout) or the access token expires, and after 120 s without reading; a client that stops reading holds one chunk of logs in memory. At most 2 exports per user and 4 per server at once (429 RATE_LIMITED with Retry-After beyond).
         */
        get: operations["exportLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/logs/tail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Live tail (Server-Sent Events)
         * @description Streams new logs that match the filters as `event: log` with `id:` set. Reconnect with `Last-Event-ID` to resume without duplicates or gaps. A comment line is sent as a heartbeat. Read it with fetch streaming: the access token goes in the Authorization header, never in the URL.
         */
        get: operations["tailLogs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List alert rules (of one project with ?projectId=, else all of yours) */
        get: operations["listAlerts"];
        put?: never;
        /**
         * Create an alert rule
         * @description The rule fires when the logs of its project that match it (level exactly; source if set; pattern, RE2, if set; query, in the search query language, if set) and whose timestamps fall within the last `window` number at least `threshold`, at most once per `cooldown`. Beyond the plan's rules per project: 403 PLAN_LIMIT_EXCEEDED.
         */
        post: operations["createAlert"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One alert rule */
        get: operations["getAlert"];
        /**
         * Change an alert rule
         * @description Takes any of name, condition (a whole new condition), channels, cooldown, enabled. Applies to the next batch of logs on every node.
         */
        put: operations["updateAlert"];
        post?: never;
        /** Delete an alert rule and its history */
        delete: operations["deleteAlert"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{id}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Firings of an alert rule, newest first
         * @description Each entry has the count that fired it, the outcome per channel (sent, failed with the error, skipped with the reason, or pending while being delivered), a few sample logs and `links.logs`: the log explorer under PUBLIC_URL with the rule's condition as a query and the window the entry counted (docs/alerts.md, "View matching logs").
         */
        get: operations["alertHistory"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test notification on each of the rule's channels now
         * @description One attempt per destination, mute ignored, with the count and sample of the current window; no history entry is written. At most 10 tests a minute per account (429 with Retry-After past that).
         */
        post: operations["testAlert"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/push/vapid-public-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The VAPID public key for PushManager.subscribe */
        get: operations["vapidPublicKey"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/push/subscriptions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Your push subscriptions */
        get: operations["listPushSubscriptions"];
        put?: never;
        /**
         * Register this browser for push notifications
         * @description Body: PushSubscription.toJSON(). The endpoint must belong to a push service on PUSH_ALLOWED_ORIGINS.
         */
        post: operations["createPushSubscription"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/push/subscriptions/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Stop push notifications to a browser */
        delete: operations["deletePushSubscription"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/destinations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A project's destinations (without secrets) */
        get: operations["listDestinations"];
        put?: never;
        /**
         * Add a webhook or Slack destination to a project
         * @description A rule whose channels name `webhook` or `slack` notifies every destination of that type in its project. A webhook's signing secret is in this answer only. The URL must be https and not point at localhost or a private, loopback or link-local address.
         */
        post: operations["createDestination"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/destinations/{destId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Remove a destination */
        delete: operations["deleteDestination"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/views": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A project's saved views, by name */
        get: operations["listViews"];
        put?: never;
        /**
         * Save a view
         * @description Any member of the project may save one. The name is unique in the project ignoring case (409 VIEW_NAME_TAKEN). At most 100 views per project (403 PLAN_LIMIT_EXCEEDED, resource "views").
         */
        post: operations["createView"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/projects/{id}/views/{viewId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One saved view */
        get: operations["getView"];
        /**
         * Change a saved view
         * @description The whole view, as when it was saved. Only the member who saved it, or an admin or the owner of the project (403 FORBIDDEN_ROLE otherwise).
         */
        put: operations["updateView"];
        post?: never;
        /**
         * Delete a saved view
         * @description Only the member who saved it, or an admin or the owner of the project.
         */
        delete: operations["deleteView"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Every error has this body. */
        ErrorBody: {
            error: {
                /** @enum {string} */
                code: "VALIDATION_ERROR" | "UNAUTHORIZED" | "TOKEN_EXPIRED" | "INVALID_CREDENTIALS" | "INVALID_REFRESH_TOKEN" | "INVALID_API_KEY" | "PLAN_LIMIT_EXCEEDED" | "FORBIDDEN_ROLE" | "NOT_FOUND" | "EMAIL_TAKEN" | "VIEW_NAME_TAKEN" | "IDEMPOTENCY_KEY_IN_USE" | "PAYLOAD_TOO_LARGE" | "UNSUPPORTED_MEDIA_TYPE" | "IDEMPOTENCY_KEY_REUSED" | "RATE_LIMITED" | "INTERNAL_ERROR" | "OVERLOADED";
                message: string;
                requestId: string;
                details?: unknown;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    signup: {
        parameters: {
            query?: never;
            header?: {
                /** @description `cookie` (the web console): the refresh token is set as an HttpOnly cookie and left out of the body */
                "x-refresh-token-transport"?: "cookie" | "body";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * Format: email
                     * @description Trimmed and lower-cased before it is stored or compared
                     */
                    email: string;
                    /** @description 8 to 256 characters, compared exactly as typed */
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user: {
                            /** @description Prefixed with usr_ */
                            id: string;
                            email: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                        };
                        /** @description A JWT, sent as `Authorization: Bearer <token>`; lasts ACCESS_TOKEN_EXPIRY (15m) */
                        accessToken: string;
                        /** @description Opaque and single-use; lasts REFRESH_TOKEN_EXPIRY (7d). Absent when the request sent `X-Refresh-Token-Transport: cookie`: the token is then set as the HttpOnly `loglane_refresh` cookie (Path=/v1/auth, SameSite=Strict) instead */
                        refreshToken?: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    login: {
        parameters: {
            query?: never;
            header?: {
                /** @description `cookie` (the web console): the refresh token is set as an HttpOnly cookie and left out of the body */
                "x-refresh-token-transport"?: "cookie" | "body";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                    password: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        user: {
                            /** @description Prefixed with usr_ */
                            id: string;
                            email: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                        };
                        /** @description A JWT, sent as `Authorization: Bearer <token>`; lasts ACCESS_TOKEN_EXPIRY (15m) */
                        accessToken: string;
                        /** @description Opaque and single-use; lasts REFRESH_TOKEN_EXPIRY (7d). Absent when the request sent `X-Refresh-Token-Transport: cookie`: the token is then set as the HttpOnly `loglane_refresh` cookie (Path=/v1/auth, SameSite=Strict) instead */
                        refreshToken?: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    refresh: {
        parameters: {
            query?: never;
            header?: {
                /** @description `cookie` (the web console): the refresh token is set as an HttpOnly cookie and left out of the body */
                "x-refresh-token-transport"?: "cookie" | "body";
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Required unless the `loglane_refresh` cookie carries it (the web console); send `{}` then */
                    refreshToken?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description A JWT, sent as `Authorization: Bearer <token>`; lasts ACCESS_TOKEN_EXPIRY (15m) */
                        accessToken: string;
                        /** @description Opaque and single-use; lasts REFRESH_TOKEN_EXPIRY (7d). Absent when the request sent `X-Refresh-Token-Transport: cookie`: the token is then set as the HttpOnly `loglane_refresh` cookie (Path=/v1/auth, SameSite=Strict) instead */
                        refreshToken?: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    logout: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Required unless the `loglane_refresh` cookie carries it (the web console); send `{}` then */
                    refreshToken?: string;
                };
            };
        };
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    me: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        email: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        subscription: {
                            /** @enum {string} */
                            plan: "free" | "starter" | "pro" | "enterprise";
                            /** @enum {string} */
                            status: "active" | "trialing" | "past_due" | "canceled";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            periodEnd: string;
                        };
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    changePassword: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    currentPassword: string;
                    /** @description 8 to 256 characters, compared exactly as typed */
                    newPassword: string;
                };
            };
        };
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    requestPasswordReset: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    email: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    confirmPasswordReset: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The token from the mailed link */
                    token: string;
                    /** @description 8 to 256 characters, compared exactly as typed */
                    newPassword: string;
                };
            };
        };
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listSessions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @description Prefixed with ses_ (logins made before sessions were listed keep their older rtf_ id) */
                            id: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            lastUsedAt: string;
                            userAgent: string | null;
                            ip: string | null;
                            /** @description The login whose access token made this request */
                            current: boolean;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    revokeSession: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteAccount: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    password: string;
                };
            };
        };
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listPlans: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @enum {string} */
                            name: "free" | "starter" | "pro" | "enterprise";
                            /** @description null means unlimited */
                            maxProjects: number | null;
                            /** @description null means unlimited */
                            maxAlertsPerProject: number | null;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listProjects: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @description Prefixed with proj_ */
                            id: string;
                            name: string;
                            /** @description The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer */
                            apiKey: string;
                            /** @description How many logs the project holds */
                            logCount: number;
                            /** @description Bytes its logs and their indexes take on disk, kept current within a minute */
                            storedBytes: number;
                            /**
                             * @description The caller's role in the project
                             * @enum {string}
                             */
                            role: "owner" | "admin" | "member";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updatedAt: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createProject: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description 1 to 100 characters; leading and trailing blanks are trimmed */
                    name: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Prefixed with proj_ */
                        id: string;
                        name: string;
                        /** @description The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer */
                        apiKey: string;
                        /** @description How many logs the project holds */
                        logCount: number;
                        /** @description Bytes its logs and their indexes take on disk, kept current within a minute */
                        storedBytes: number;
                        /**
                         * @description The caller's role in the project
                         * @enum {string}
                         */
                        role: "owner" | "admin" | "member";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Prefixed with proj_ */
                        id: string;
                        name: string;
                        /** @description The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer */
                        apiKey: string;
                        /** @description How many logs the project holds */
                        logCount: number;
                        /** @description Bytes its logs and their indexes take on disk, kept current within a minute */
                        storedBytes: number;
                        /**
                         * @description The caller's role in the project
                         * @enum {string}
                         */
                        role: "owner" | "admin" | "member";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    updateProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description 1 to 100 characters; leading and trailing blanks are trimmed */
                    name: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Prefixed with proj_ */
                        id: string;
                        name: string;
                        /** @description The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer */
                        apiKey: string;
                        /** @description How many logs the project holds */
                        logCount: number;
                        /** @description Bytes its logs and their indexes take on disk, kept current within a minute */
                        storedBytes: number;
                        /**
                         * @description The caller's role in the project
                         * @enum {string}
                         */
                        role: "owner" | "admin" | "member";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    rotateProjectKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description The new full key; the old one no longer works */
                        apiKey: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listMembers: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            userId: string;
                            email: string;
                            /** @enum {string} */
                            role: "owner" | "admin" | "member";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            joinedAt: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    setMemberRole: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /**
                     * @description `admin` or `member` (ownership moves only by a transfer)
                     * @enum {string}
                     */
                    role: "admin" | "member";
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        userId: string;
                        email: string;
                        /** @enum {string} */
                        role: "owner" | "admin" | "member";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        joinedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    removeMember: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                userId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    transferProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description An admin of the project */
                    userId: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Prefixed with proj_ */
                        id: string;
                        name: string;
                        /** @description The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer */
                        apiKey: string;
                        /** @description How many logs the project holds */
                        logCount: number;
                        /** @description Bytes its logs and their indexes take on disk, kept current within a minute */
                        storedBytes: number;
                        /**
                         * @description The caller's role in the project
                         * @enum {string}
                         */
                        role: "owner" | "admin" | "member";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listInvitations: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            email: string;
                            /** @enum {string} */
                            role: "owner" | "admin" | "member";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            expiresAt: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Trimmed and lower-cased; only the account with this email can accept */
                    email: string;
                    /**
                     * @description `admin` or `member` (ownership moves only by a transfer)
                     * @enum {string}
                     */
                    role: "admin" | "member";
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        email: string;
                        /** @enum {string} */
                        role: "owner" | "admin" | "member";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        expiresAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    revokeInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                invId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    acceptInvitation: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description The token from the mailed link */
                    token: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        project: {
                            /** @description Prefixed with proj_ */
                            id: string;
                            name: string;
                            /** @description The full key (llk_…) on create, GET by id and rotate; masked (first 8 … last 4) in the list and the update answer */
                            apiKey: string;
                            /** @description How many logs the project holds */
                            logCount: number;
                            /** @description Bytes its logs and their indexes take on disk, kept current within a minute */
                            storedBytes: number;
                            /**
                             * @description The caller's role in the project
                             * @enum {string}
                             */
                            role: "owner" | "admin" | "member";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updatedAt: string;
                        };
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getProjectNotifications: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description true: you get no alert notifications (email, push) of this project */
                        muted: boolean;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    setProjectNotifications: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description true: you get no alert notifications (email, push) of this project */
                    muted: boolean;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description true: you get no alert notifications (email, push) of this project */
                        muted: boolean;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    ingestLogs: {
        parameters: {
            query?: never;
            header?: {
                "idempotency-key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        /** @description One log, an array of logs, or {"logs": [...]}; or NDJSON (one log per line) with Content-Type: application/x-ndjson. Content-Encoding: gzip or deflate. At most 5 MiB decompressed and 10,000 logs. */
        requestBody: {
            content: {
                "application/json": ({
                    /** @description Required, at most 64 KiB. `msg` is accepted instead. */
                    message: string;
                    /** @description Default: the time of receipt. `time` is accepted instead. */
                    timestamp?: string | number;
                    /** @description trace, debug, info (default), warn, error, fatal; any case; aliases such as warning, err, critical, notice; pino numbers 10–60 */
                    level?: string | number;
                    source?: string;
                    /** @description At most 64 KiB serialised. Other top-level fields are added to it. */
                    metadata?: {
                        [key: string]: unknown;
                    };
                } & {
                    [key: string]: unknown;
                }) | ({
                    /** @description Required, at most 64 KiB. `msg` is accepted instead. */
                    message: string;
                    /** @description Default: the time of receipt. `time` is accepted instead. */
                    timestamp?: string | number;
                    /** @description trace, debug, info (default), warn, error, fatal; any case; aliases such as warning, err, critical, notice; pino numbers 10–60 */
                    level?: string | number;
                    source?: string;
                    /** @description At most 64 KiB serialised. Other top-level fields are added to it. */
                    metadata?: {
                        [key: string]: unknown;
                    };
                } & {
                    [key: string]: unknown;
                })[] | {
                    logs: ({
                        /** @description Required, at most 64 KiB. `msg` is accepted instead. */
                        message: string;
                        /** @description Default: the time of receipt. `time` is accepted instead. */
                        timestamp?: string | number;
                        /** @description trace, debug, info (default), warn, error, fatal; any case; aliases such as warning, err, critical, notice; pino numbers 10–60 */
                        level?: string | number;
                        source?: string;
                        /** @description At most 64 KiB serialised. Other top-level fields are added to it. */
                        metadata?: {
                            [key: string]: unknown;
                        };
                    } & {
                        [key: string]: unknown;
                    })[];
                };
            };
        };
        responses: {
            /** @description Default Response */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Logs stored (durably committed before this answer) */
                        accepted: number;
                        /** @description The logs that were refused, by position in the batch */
                        rejected: {
                            index: number;
                            message: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    otlpExportLogs: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** @description ExportLogsServiceRequest (opentelemetry/proto/collector/logs/v1) */
        requestBody: {
            content: {
                "application/json": {
                    resourceLogs?: {
                        [key: string]: unknown;
                    }[];
                };
            };
        };
        responses: {
            /** @description ExportLogsServiceResponse; protobuf when the request was protobuf */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        partialSuccess?: {
                            rejectedLogRecords: string;
                            errorMessage: string;
                        };
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    searchLogs: {
        parameters: {
            query: {
                /** @description ISO 8601 or epoch ms; inclusive */
                from?: string;
                /** @description ISO 8601 or epoch ms; inclusive */
                to?: string;
                /** @description One level or a comma-separated list */
                level?: string;
                source?: string;
                /** @description Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters. */
                q?: string;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
                /** @description RE2 regular expression matched anywhere in the message */
                pattern?: string;
                limit: number;
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            /** @description log_ and the log's sequence number in its project (commit order) */
                            id: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            timestamp: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            receivedAt: string;
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            message: string;
                            source: string | null;
                            metadata: {
                                [key: string]: unknown;
                            };
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    logStats: {
        parameters: {
            query?: {
                /** @description ISO 8601 or epoch ms; inclusive */
                from?: string;
                /** @description ISO 8601 or epoch ms; inclusive */
                to?: string;
                /** @description One level or a comma-separated list */
                level?: string;
                source?: string;
                /** @description Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters. */
                q?: string;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
                /** @description RE2 regular expression matched anywhere in the message; counted in the app within QUERY_TIME_BUDGET, so keep the range narrow */
                pattern?: string;
                /** @description Bucket size such as 1m, 5m, 1h, 1d; chosen from the range when omitted */
                interval?: string;
                /** @description Split each bucket by `level`, `source` or a metadata path (`path` or `@path`): `groups` holds the 10 most frequent values of the whole range, the rest under "(other)", logs without the field under "(none)". Counted in the app within QUERY_TIME_BUDGET. */
                groupBy?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        interval: string;
                        buckets: {
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            start: string;
                            total: number;
                            levels: {
                                [key: string]: number;
                            };
                            /** @description With groupBy: counts per value (only values with a count above zero) */
                            groups?: {
                                [key: string]: number;
                            };
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    logFacets: {
        parameters: {
            query: {
                /** @description ISO 8601 or epoch ms; inclusive */
                from?: string;
                /** @description ISO 8601 or epoch ms; inclusive */
                to?: string;
                /** @description One level or a comma-separated list */
                level?: string;
                source?: string;
                /** @description Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters. */
                q?: string;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
                /** @description RE2 regular expression matched anywhere in the message */
                pattern?: string;
                /** @description A comma list of up to 20 fields to count: level, source, metadata paths (@res.statusCode) */
                fields: string;
                /** @description Values named per field; the rest are summed in `other` */
                limit: number;
                /** @description A numeric metadata path: each named value also gets p50 and p95 of it among its logs */
                measure?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Logs selected in the range */
                        total: number;
                        facets: {
                            field: string;
                            values: {
                                value: string;
                                count: number;
                                p50?: number | null;
                                p95?: number | null;
                            }[];
                            /** @description Logs with another value than those named */
                            other: number;
                            /** @description Logs without the field */
                            none: number;
                            numeric: {
                                /** @description Logs' numbers seen (JSON numbers only) */
                                count: number;
                                min: number;
                                max: number;
                                p50: number;
                                p95: number;
                                /** @description True when the percentiles come from a uniform sample of 10,000 of the numbers */
                                sampled: boolean;
                            } | null;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    logFields: {
        parameters: {
            query?: {
                /** @description ISO 8601 or epoch ms; inclusive */
                from?: string;
                /** @description ISO 8601 or epoch ms; inclusive */
                to?: string;
                /** @description One level or a comma-separated list */
                level?: string;
                source?: string;
                /** @description Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters. */
                q?: string;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
                pattern?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        total: number;
                        fields: {
                            field: string;
                            /** @description Logs that hold it */
                            count: number;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    logContext: {
        parameters: {
            query: {
                before: number;
                after: number;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
            };
            header?: never;
            path: {
                id: string;
                logId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @description Newest first */
                        before: {
                            /** @description log_ and the log's sequence number in its project (commit order) */
                            id: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            timestamp: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            receivedAt: string;
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            message: string;
                            source: string | null;
                            metadata: {
                                [key: string]: unknown;
                            };
                        }[];
                        log: {
                            /** @description log_ and the log's sequence number in its project (commit order) */
                            id: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            timestamp: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            receivedAt: string;
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            message: string;
                            source: string | null;
                            metadata: {
                                [key: string]: unknown;
                            };
                        };
                        /** @description Oldest first */
                        after: {
                            /** @description log_ and the log's sequence number in its project (commit order) */
                            id: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            timestamp: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            receivedAt: string;
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            message: string;
                            source: string | null;
                            metadata: {
                                [key: string]: unknown;
                            };
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    exportLogs: {
        parameters: {
            query: {
                /** @description ISO 8601 or epoch ms; inclusive */
                from?: string;
                /** @description ISO 8601 or epoch ms; inclusive */
                to?: string;
                /** @description One level or a comma-separated list */
                level?: string;
                source?: string;
                /** @description Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters. */
                q?: string;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
                /** @description RE2 regular expression matched anywhere in the message */
                pattern?: string;
                format: "ndjson" | "csv";
                /** @description CSV: a comma list of log fields (id, timestamp, receivedAt, level, source, message, metadata) and metadata paths; default timestamp,level,source,message */
                columns?: string;
                /** @description CSV: write cells as they are. By default a cell beginning with =, +, -, @, a tab or a carriage return gets a leading ' so that a spreadsheet does not take it for a formula (the header row is always written as asked). */
                raw?: boolean;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description application/x-ndjson or text/csv */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": string;
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    tailLogs: {
        parameters: {
            query?: {
                /** @description ISO 8601 or epoch ms; inclusive */
                from?: string;
                /** @description ISO 8601 or epoch ms; inclusive */
                to?: string;
                /** @description One level or a comma-separated list */
                level?: string;
                source?: string;
                /** @description Text the message contains, ignoring case as the query language does (Unicode case folding); the same as the query message:"…" (a phrase on the message). *, ?, % and _ are plain characters. */
                q?: string;
                /** @description A search query (docs/search.md), ANDed with the other filters: words and phrases in the message and metadata values (`timeout`, `"connection reset"`, `req-1007`), fields (`level:>=warn`, `source:api-*`), metadata paths (`@res.statusCode:>=500`, `@http.response.status_code:[500 TO 599]`, `@user.id:*`), value lists (`@method:(GET OR HEAD)`), regexes (`/time(out|d out)/`, `@path:/^\/v1\//`), and `AND`, `OR`, `NOT`, `-`, parentheses (NOT binds tightest, then AND, then OR). A query that does not parse is a 400 whose message gives the column. */
                query?: string;
                pattern?: string;
            };
            header?: {
                "last-event-id"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description text/event-stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": string;
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listAlerts: {
        parameters: {
            query?: {
                projectId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            projectId: string;
                            name: string;
                            condition: {
                                /** @enum {string} */
                                level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                                threshold: number;
                                window: string;
                                source?: string;
                                pattern?: string;
                                query?: string;
                                /** @enum {string} */
                                comparison: "above" | "below";
                            };
                            channels: ("email" | "push" | "webhook" | "slack")[];
                            cooldown: string;
                            enabled: boolean;
                            /** @enum {string} */
                            state: "ok" | "firing";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            stateSince: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            mutedUntil: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            lastTriggeredAt: string | null;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updatedAt: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createAlert: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    projectId: string;
                    /** @description Alert name */
                    name: string;
                    condition: {
                        /** @description One of trace, debug, info, warn, error, fatal; matches that level exactly */
                        level: string;
                        /** @description How many matching logs within the window fire the rule */
                        threshold: number;
                        /** @description 1s to 7d, e.g. 5m */
                        window: string;
                        /** @description Only logs from this source count */
                        source?: string;
                        /** @description RE2 regular expression matched anywhere in the message */
                        pattern?: string;
                        /** @description A search query (docs/search.md) the logs must match too, e.g. `@res.statusCode:>=500 -@path:"/healthz"`; `level` stays required */
                        query?: string;
                        /**
                         * @description above (default): fires when the count reaches the threshold; below: when it is under it (the logs stopped)
                         * @enum {string}
                         */
                        comparison?: "above" | "below";
                    };
                    /** @description A non-empty set of email, push, webhook, slack (webhook and slack: every destination of that type in the project) */
                    channels: ("email" | "push" | "webhook" | "slack")[];
                    /** @description Minimum time between firings, 0s to 7d; default 15m */
                    cooldown?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        projectId: string;
                        name: string;
                        condition: {
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            threshold: number;
                            window: string;
                            source?: string;
                            pattern?: string;
                            query?: string;
                            /** @enum {string} */
                            comparison: "above" | "below";
                        };
                        channels: ("email" | "push" | "webhook" | "slack")[];
                        cooldown: string;
                        enabled: boolean;
                        /** @enum {string} */
                        state: "ok" | "firing";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        stateSince: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        mutedUntil: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        lastTriggeredAt: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getAlert: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        projectId: string;
                        name: string;
                        condition: {
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            threshold: number;
                            window: string;
                            source?: string;
                            pattern?: string;
                            query?: string;
                            /** @enum {string} */
                            comparison: "above" | "below";
                        };
                        channels: ("email" | "push" | "webhook" | "slack")[];
                        cooldown: string;
                        enabled: boolean;
                        /** @enum {string} */
                        state: "ok" | "firing";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        stateSince: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        mutedUntil: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        lastTriggeredAt: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    updateAlert: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Alert name */
                    name?: string;
                    condition?: {
                        /** @description One of trace, debug, info, warn, error, fatal; matches that level exactly */
                        level: string;
                        /** @description How many matching logs within the window fire the rule */
                        threshold: number;
                        /** @description 1s to 7d, e.g. 5m */
                        window: string;
                        /** @description Only logs from this source count */
                        source?: string;
                        /** @description RE2 regular expression matched anywhere in the message */
                        pattern?: string;
                        /** @description A search query (docs/search.md) the logs must match too, e.g. `@res.statusCode:>=500 -@path:"/healthz"`; `level` stays required */
                        query?: string;
                        /**
                         * @description above (default): fires when the count reaches the threshold; below: when it is under it (the logs stopped)
                         * @enum {string}
                         */
                        comparison?: "above" | "below";
                    };
                    /** @description A non-empty set of email, push, webhook, slack (webhook and slack: every destination of that type in the project) */
                    channels?: ("email" | "push" | "webhook" | "slack")[];
                    /** @description Minimum time between firings, 0s to 7d; default 15m */
                    cooldown?: string;
                    enabled?: boolean;
                    /** @description ISO 8601 time until which deliveries are skipped (entries are still written); null or a past time: not muted */
                    mutedUntil?: string | null;
                    /** @description Cannot change; accepted only when equal to the current one */
                    projectId?: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        projectId: string;
                        name: string;
                        condition: {
                            /** @enum {string} */
                            level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                            threshold: number;
                            window: string;
                            source?: string;
                            pattern?: string;
                            query?: string;
                            /** @enum {string} */
                            comparison: "above" | "below";
                        };
                        channels: ("email" | "push" | "webhook" | "slack")[];
                        cooldown: string;
                        enabled: boolean;
                        /** @enum {string} */
                        state: "ok" | "firing";
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        stateSince: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        mutedUntil: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        lastTriggeredAt: string | null;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteAlert: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    alertHistory: {
        parameters: {
            query: {
                limit: number;
                cursor?: string;
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            alertId: string;
                            /** @enum {string} */
                            kind: "triggered" | "resolved";
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            triggeredAt: string;
                            matchedCount: number;
                            threshold: number;
                            window: string;
                            deliveries: {
                                /** @enum {string} */
                                channel: "email" | "push" | "webhook" | "slack";
                                /** @enum {string} */
                                status: "pending" | "sent" | "failed" | "skipped";
                                error?: string;
                            }[];
                            sample: {
                                /** @description log_ and the log's sequence number in its project (commit order) */
                                id: string;
                                /**
                                 * Format: date-time
                                 * @description ISO 8601 UTC with milliseconds
                                 */
                                timestamp: string;
                                /**
                                 * Format: date-time
                                 * @description ISO 8601 UTC with milliseconds
                                 */
                                receivedAt: string;
                                /** @enum {string} */
                                level: "trace" | "debug" | "info" | "warn" | "error" | "fatal";
                                message: string;
                                source: string | null;
                                metadata: {
                                    [key: string]: unknown;
                                };
                            }[];
                            links: {
                                /** @description View matching logs: the explorer under PUBLIC_URL with the rule's condition (its current one) as a query and the entry's window as from/to */
                                logs: string;
                            };
                        }[];
                        nextCursor: string | null;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    testAlert: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        deliveries: {
                            /** @enum {string} */
                            channel: "email" | "push" | "webhook" | "slack";
                            /** @enum {string} */
                            status: "sent" | "failed" | "skipped";
                            error?: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    vapidPublicKey: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        publicKey: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listPushSubscriptions: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            endpoint: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createPushSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    endpoint: string;
                    expirationTime?: number | null;
                    keys: {
                        p256dh: string;
                        auth: string;
                    };
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        endpoint: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deletePushSubscription: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listDestinations: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            /** @enum {string} */
                            type: "webhook" | "slack";
                            name: string;
                            url: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /** @description A webhook's signing secret (whsec_…): in the answer to its creation only */
                            secret?: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createDestination: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @enum {string} */
                    type: "webhook" | "slack";
                    name?: string;
                    /** @description https; not localhost or a private, loopback or link-local address (WEBHOOK_ALLOWED_ORIGINS lifts this) */
                    url: string;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        /** @enum {string} */
                        type: "webhook" | "slack";
                        name: string;
                        url: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /** @description A webhook's signing secret (whsec_…): in the answer to its creation only */
                        secret?: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteDestination: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                destId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    listViews: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        data: {
                            id: string;
                            projectId: string;
                            name: string;
                            query: string;
                            range: {
                                last: string;
                            } | {
                                /**
                                 * Format: date-time
                                 * @description ISO 8601 UTC with milliseconds
                                 */
                                from: string;
                                /**
                                 * Format: date-time
                                 * @description ISO 8601 UTC with milliseconds
                                 */
                                to: string;
                            };
                            columns: string[];
                            groupBy: string | null;
                            createdBy: {
                                id: string;
                                /** @description null once the account that saved it is deleted */
                                email: string | null;
                            };
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            createdAt: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            updatedAt: string;
                        }[];
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    createView: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Unique in the project, ignoring case */
                    name: string;
                    /** @description A search query (docs/search.md); empty: every log */
                    query?: string;
                    /** @description Either a relative range ({"last": "15m"}) or an absolute one ({"from": ..., "to": ...}), not both */
                    range: {
                        /** @description The last N seconds, minutes, hours or days before the view is opened: 15m, 24h, 7d (1s to 400d) */
                        last?: string;
                        /** @description ISO 8601 or epoch ms */
                        from?: string;
                        /** @description ISO 8601 or epoch ms */
                        to?: string;
                    };
                    /** @description Columns shown beside the message: timestamp, level, source, message, or metadata paths (@res.statusCode) */
                    columns?: string[];
                    /** @description The histogram's split, as stats groupBy */
                    groupBy?: string | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        projectId: string;
                        name: string;
                        query: string;
                        range: {
                            last: string;
                        } | {
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            from: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            to: string;
                        };
                        columns: string[];
                        groupBy: string | null;
                        createdBy: {
                            id: string;
                            /** @description null once the account that saved it is deleted */
                            email: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    getView: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                viewId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        projectId: string;
                        name: string;
                        query: string;
                        range: {
                            last: string;
                        } | {
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            from: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            to: string;
                        };
                        columns: string[];
                        groupBy: string | null;
                        createdBy: {
                            id: string;
                            /** @description null once the account that saved it is deleted */
                            email: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    updateView: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                viewId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": {
                    /** @description Unique in the project, ignoring case */
                    name: string;
                    /** @description A search query (docs/search.md); empty: every log */
                    query?: string;
                    /** @description Either a relative range ({"last": "15m"}) or an absolute one ({"from": ..., "to": ...}), not both */
                    range: {
                        /** @description The last N seconds, minutes, hours or days before the view is opened: 15m, 24h, 7d (1s to 400d) */
                        last?: string;
                        /** @description ISO 8601 or epoch ms */
                        from?: string;
                        /** @description ISO 8601 or epoch ms */
                        to?: string;
                    };
                    /** @description Columns shown beside the message: timestamp, level, source, message, or metadata paths (@res.statusCode) */
                    columns?: string[];
                    /** @description The histogram's split, as stats groupBy */
                    groupBy?: string | null;
                };
            };
        };
        responses: {
            /** @description Default Response */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        id: string;
                        projectId: string;
                        name: string;
                        query: string;
                        range: {
                            last: string;
                        } | {
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            from: string;
                            /**
                             * Format: date-time
                             * @description ISO 8601 UTC with milliseconds
                             */
                            to: string;
                        };
                        columns: string[];
                        groupBy: string | null;
                        createdBy: {
                            id: string;
                            /** @description null once the account that saved it is deleted */
                            email: string | null;
                        };
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        createdAt: string;
                        /**
                         * Format: date-time
                         * @description ISO 8601 UTC with milliseconds
                         */
                        updatedAt: string;
                    };
                };
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
    deleteView: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                viewId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description No body */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description Every error has this body. */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            403: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            415: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
            /** @description Every error has this body. */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ErrorBody"];
                };
            };
        };
    };
}
