import { z } from 'zod';

/** The JWS algorithms a `privateKeyJwt` client assertion can be signed with (RFC 7518). */
export const CLIENT_ASSERTION_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/**
 * How Switchboard signs in to an OAuth upstream (issue #16). Everything is optional: without it
 * the client registers itself dynamically and asks for the scopes the server names. With
 * `grant: "client_credentials"` (issue #29) nobody signs in: the daemon gets its tokens itself
 * with `clientId` and either `clientSecret` or `privateKeyJwt`.
 */
export const OAuthSettingsSchema = z
  .object({
    /**
     * `authorization_code`: a person signs in; `client_credentials`: the daemon does, unattended;
     * `jwt_bearer`: the daemon trades a workload identity token (`assertion`) for one (RFC 7523 §2.1). @default "authorization_code"
     */
    grant: z.enum(['authorization_code', 'client_credentials', 'jwt_bearer']).optional(),
    /** A client id registered with the server's authorization server beforehand. */
    clientId: z.string().min(1).optional(),
    /** Its secret, for a confidential client; `${VAR}` or `!cmd` keeps it out of the file. */
    clientSecret: z.string().min(1).optional(),
    /** How `clientSecret` is presented at the token endpoint. @default what the authorization server prefers (basic first) */
    tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post']).optional(),
    /**
     * The private key (PEM or JWK) that signs an RFC 7523 client assertion instead of a secret:
     * a file path, or `!cmd` / `${VAR}` giving the key itself. Only with `client_credentials`.
     */
    privateKeyJwt: z.string().min(1).optional(),
    /**
     * The workload identity token (a JWT) of `jwt_bearer`: a file path, read afresh for every
     * token request (platforms rotate it), or the token itself from `!cmd` / `${VAR}`.
     */
    assertion: z.string().min(1).optional(),
    /** The assertion's signing algorithm. @default the key's own (RS256, ES256/384/512, EdDSA) */
    signingAlgorithm: z.enum(CLIENT_ASSERTION_ALGS).optional(),
    /** Scopes to ask for. @default the scopes the server's challenge or metadata names */
    scopes: z.array(z.string().min(1)).optional(),
    /** Where this client's metadata document is published (https), for Client ID Metadata Documents. */
    clientMetadataUrl: z.url({ protocol: /^https$/, message: 'Expected an https URL' }).optional(),
  })
  .strict()
  .superRefine((oauth, ctx) => {
    const problem = (path: string, message: string): void => ctx.addIssue({ code: 'custom', message, path: [path] });
    if (oauth.clientSecret !== undefined && oauth.clientId === undefined) problem('clientSecret', 'clientSecret needs clientId');
    if (oauth.grant === 'client_credentials') {
      if (oauth.clientId === undefined) problem('clientId', 'grant "client_credentials" needs clientId');
      if ((oauth.clientSecret === undefined) === (oauth.privateKeyJwt === undefined)) {
        problem('clientSecret', 'grant "client_credentials" needs exactly one of clientSecret and privateKeyJwt');
      }
      if (oauth.clientMetadataUrl !== undefined) problem('clientMetadataUrl', 'clientMetadataUrl is for signing a person in, not for grant "client_credentials"');
    } else if (oauth.grant === 'jwt_bearer') {
      if (oauth.clientId === undefined) problem('clientId', 'grant "jwt_bearer" needs clientId');
      if (oauth.assertion === undefined) problem('assertion', 'grant "jwt_bearer" needs assertion');
      if (oauth.privateKeyJwt !== undefined) problem('privateKeyJwt', 'privateKeyJwt needs grant "client_credentials"');
    } else {
      if (oauth.privateKeyJwt !== undefined) problem('privateKeyJwt', 'privateKeyJwt needs grant "client_credentials"');
      if (oauth.signingAlgorithm !== undefined) problem('signingAlgorithm', 'signingAlgorithm needs privateKeyJwt');
    }
    if (oauth.tokenEndpointAuthMethod !== undefined && oauth.clientSecret === undefined) problem('tokenEndpointAuthMethod', 'tokenEndpointAuthMethod needs clientSecret');
    if (oauth.assertion !== undefined && oauth.grant !== 'jwt_bearer') problem('assertion', 'assertion needs grant "jwt_bearer"');
  });
