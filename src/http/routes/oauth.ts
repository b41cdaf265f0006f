import type { FastifyPluginCallback } from 'fastify';
import type { Logger } from 'pino';
import { z } from 'zod';
import { errorMessage, SwitchboardError } from '../../errors.js';
import type { MCPManager } from '../../upstream/manager.js';
import { OAUTH_CALLBACK_PATH, type OAuthBroker } from '../../upstream/oauth/broker.js';
import type { SwitchboardRuntime } from '../../runtime/runtime.js';
import { EmptyBodySchema, NameParamsSchema, parseInput } from '../schemas.js';

export interface OAuthRoutesOptions {
  manager: MCPManager;
  runtime: SwitchboardRuntime;
  oauth: OAuthBroker;
  logger: Logger;
}

/** What the authorization server sends the browser back with; anything else is ignored. */
const CallbackQuerySchema = z.object({
  state: z.string({ error: 'Expected a single value' }).max(512, { error: 'Too long' }).optional(),
  code: z.string({ error: 'Expected a single value' }).max(4096, { error: 'Too long' }).optional(),
  iss: z.string({ error: 'Expected a single value' }).max(2048, { error: 'Too long' }).optional(),
  error: z.string({ error: 'Expected a single value' }).max(256, { error: 'Too long' }).optional(),
});

/**
 * Sign-in to OAuth upstreams (issue #16). `login` and `logout` are operator actions like reload;
 * `/oauth/callback` is where the browser lands, so it needs no bearer token (the auth hook lists
 * it as public) — its single-use, expiring `state` is what guards it.
 */
export const oauthRoutes: FastifyPluginCallback<OAuthRoutesOptions> = (app, { manager, runtime, oauth, logger }, done) => {
  const configOf = (name: string) => {
    const config = manager.serverConfig(name);
    if (!config) throw new SwitchboardError('SERVER_NOT_FOUND', `No server named "${name}"`);
    return config;
  };

  app.post('/servers/:name/login', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    parseInput(EmptyBodySchema, request.body, 'body');
    const offer = await oauth.begin(name, configOf(name));
    return { server: name, ...offer };
  });

  app.post('/servers/:name/logout', async (request) => {
    const { name } = parseInput(NameParamsSchema, request.params, 'params');
    parseInput(EmptyBodySchema, request.body, 'body');
    await oauth.forget(name, configOf(name));
    // Reconnected without tokens, the server asks for a sign-in again (needs_auth).
    return runtime.reloadServer(name);
  });

  app.get(OAUTH_CALLBACK_PATH, async (request, reply) => {
    const query = parseInput(CallbackQuerySchema, request.query, 'query');
    const server = await oauth.complete(query, (name) => manager.serverConfig(name));
    // A server waiting for this sign-in connects now; a connected one (a new sign-in on top of
    // a working one) is reconnected so that nothing keeps using what the person replaced. (The
    // broker announced the sign-in: the other replicas of a cluster resume theirs.)
    if (!manager.resumeAfterSignIn(server)) {
      runtime.reloadServer(server).catch((err: unknown) => logger.warn({ server, err: errorMessage(err) }, 'reconnect after sign-in failed'));
    }
    return reply.type('text/html; charset=utf-8').send(signedInPage(server));
  });

  done();
};

/** What the person sees in the browser tab. */
function signedInPage(server: string): string {
  const name = server.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return (
    `<!doctype html><html><head><meta charset="utf-8"><title>Signed in</title></head>` +
    `<body><p>Signed in to <strong>${name}</strong>. Switchboard is connecting it; you can close this tab.</p></body></html>\n`
  );
}
