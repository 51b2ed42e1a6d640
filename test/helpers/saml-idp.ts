// A SAML 2.0 identity provider for the single sign-on tests, offline: samlify's IdentityProvider with the test-only key
// pair of test/fixtures/saml/. It is never reached over HTTP: a test reads the AuthnRequest from the URL our sign-in
// sent the browser to, has this provider answer it with a signed Response, and posts that Response to our ACS URL as
// the browser's auto-submitting form would.
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import * as samlify from "samlify";
import { POST as authRoute } from "../../app/api/auth/[...all]/route";
import { authFor } from "../../server/identity/better-auth";
import { SAML_CLOCK_SKEW_MS } from "../../server/identity/sso/plugin";
import { CLIENT_ADDRESS_HEADER } from "../../server/platform/client-address";
import { browse, connectedOrg, type Landing, type TestPolicy } from "./identity-providers";
import { cookieHeader, randomAddress, TEST_ORIGIN } from "./members";

/** The test identity provider's entity id (its metadata's `entityID`, every Response's Issuer). */
export const SAML_IDP_ENTITY_ID = "https://idp.test.example/saml";

/** The origin the identity provider's pages are on: the `Origin` of the form it posts to our ACS URL. */
export const SAML_IDP_ORIGIN = "https://idp.test.example";

/** Where our sign-in sends the browser (HTTP-Redirect binding): never fetched, the tests read the URL. */
export const SAML_IDP_SSO_URL = "https://idp.test.example/saml/sso";

const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const BASIC_NAME_FORMAT = "urn:oasis:names:tc:SAML:2.0:attrname-format:basic";
const FIXTURES = join(__dirname, "..", "fixtures", "saml");

function identityProvider(signatureAlgorithm: string) {
  return samlify.IdentityProvider({
    entityID: SAML_IDP_ENTITY_ID,
    signingCert: readFileSync(join(FIXTURES, "idp-cert.pem"), "utf8"),
    privateKey: readFileSync(join(FIXTURES, "idp-key.pem"), "utf8"),
    requestSignatureAlgorithm: signatureAlgorithm,
    wantAuthnRequestsSigned: false,
    isAssertionEncrypted: false,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: REDIRECT_BINDING, Location: SAML_IDP_SSO_URL }],
    singleLogoutService: [{ Binding: REDIRECT_BINDING, Location: `${SAML_IDP_ORIGIN}/saml/slo` }],
  });
}

const idp = identityProvider("http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
// The same provider (entity id, key) as one still set to SHA-1 signs: RSA-SHA1 with SHA-1 digests.
const sha1Idp = identityProvider("http://www.w3.org/2000/09/xmldsig#rsa-sha1");

/** The identity provider's metadata XML, as an organisation pastes it into `sso.connectSaml({ metadataXml })`. */
export const samlIdpMetadataXml: string = idp.getMetadata();

/** Who the identity provider says signed in. */
export interface SamlPerson {
  email: string;
  name: string;
  groups: string[];
}

/** How {@link samlResponseFor} departs from a well-formed answer to the request. */
export interface SamlResponseOptions {
  /** No InResponseTo (on the Response and its SubjectConfirmationData): an unsolicited, IdP-initiated answer. */
  unsolicited?: boolean;
  /** Issued 20 minutes ago, its NotOnOrAfter 10 minutes ago: past the 5-minute clock skew. */
  expired?: boolean;
  /** The NameID replaced by this address after the Response was signed. */
  tamperNameId?: string;
  /** Only the Response signed, its Assertion not (as an IdP set to sign the response only does). */
  unsignedAssertion?: boolean;
  /** Signed with RSA-SHA1 and SHA-1 digests instead of RSA-SHA256. */
  sha1?: boolean;
  /** The Audience, instead of our SP entity id (an answer meant for another service provider). */
  audience?: string;
}

/** A SAML Response, base64 as the auto-submitting form posts it, with where it goes and what it answers. */
export interface SamlAnswer {
  SAMLResponse: string;
  RelayState: string | null;
  /** Our ACS URL the AuthnRequest named: the Response's Destination and Recipient. */
  acsUrl: string;
  /** The AuthnRequest's ID (the Response's InResponseTo unless unsolicited). */
  requestId: string;
  /** The Assertion's ID, which our service accepts once. */
  assertionId: string;
}

function escapeXml(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function attributeXml(name: string, values: string[]): string {
  const items = values.map(
    (value) => `<saml:AttributeValue xsi:type="xs:string">${escapeXml(value)}</saml:AttributeValue>`,
  );
  return `<saml:Attribute Name="${name}" NameFormat="${BASIC_NAME_FORMAT}">${items.join("")}</saml:Attribute>`;
}

/**
 * Our service provider as the identity provider's administrator set it up: from our SP metadata, downloaded from the
 * entity id the AuthnRequest names as its Issuer (the metadata URL). Responses to it are signed as a whole too, and
 * their Assertion unless `unsignedAssertion`.
 */
async function serviceProviderOf(samlRequest: string | undefined, unsignedAssertion = false) {
  const xml = samlRequest ? inflateRawSync(Buffer.from(samlRequest, "base64")).toString("utf8") : "";
  const issuer = /<(?:\w+:)?Issuer[^>]*>([^<]+)<\/(?:\w+:)?Issuer>/.exec(xml)?.[1];
  if (!issuer) throw new Error("the redirect URL carries no AuthnRequest with an Issuer");
  const metadataUrl = issuer.replace(/&amp;/g, "&");
  if (!metadataUrl.startsWith(`${TEST_ORIGIN}/api/auth/sso/saml2/sp/metadata?`))
    throw new Error(`unknown SP ${issuer}`);
  const response = await authFor(TEST_ORIGIN).handler(new Request(metadataUrl));
  if (response.status !== 200) throw new Error(`no SP metadata at ${metadataUrl}: ${response.status}`);
  const metadata = await response.text();
  return samlify.ServiceProvider({
    metadata: unsignedAssertion
      ? metadata.replace('WantAssertionsSigned="true"', 'WantAssertionsSigned="false"')
      : metadata,
    wantMessageSigned: true,
  });
}

/**
 * The identity provider's answer to the sign-in our service sent the browser to at `redirectUrl` (HTTP-Redirect
 * binding, `SAMLRequest` and `RelayState` in the query): a Response signed as a whole, around an Assertion signed
 * itself (RSA-SHA256), NameID `person.email` (emailAddress format), attributes `email`, `name` and `groups` (one value
 * per group), InResponseTo the AuthnRequest's ID, Destination and Recipient the ACS URL the request named, Audience
 * our SP entity id, valid from a minute ago for five minutes; `options` make it unsolicited, expired, tampered with
 * after signing, signed as a Response only or with SHA-1, or meant for another audience.
 * @throws Error when the URL carries no AuthnRequest samlify can read.
 */
export async function samlResponseFor(
  redirectUrl: string,
  person: SamlPerson,
  options: SamlResponseOptions = {},
): Promise<SamlAnswer> {
  const query = Object.fromEntries(new URL(redirectUrl).searchParams);
  const sp = await serviceProviderOf(query.SAMLRequest, options.unsignedAssertion);
  const { extract } = await idp.parseLoginRequest(sp, "redirect", { query });
  const request = extract.request as { id: string; assertionConsumerServiceUrl: string };
  const spEntityId = extract.issuer as string;
  const acsUrl = request.assertionConsumerServiceUrl;
  const minute = 60 * 1000;
  const now = options.expired ? Date.now() - 20 * minute : Date.now();
  const notOnOrAfter = new Date(options.expired ? Date.now() - SAML_CLOCK_SKEW_MS - 5 * minute : now + 5 * minute);
  const assertionId = `_${randomUUID()}`;
  const inResponseTo = options.unsolicited ? undefined : request.id;
  const sessionIndex = `_${randomBytes(8).toString("hex")}`;
  const authnStatement =
    `<saml:AuthnStatement AuthnInstant="${new Date(now).toISOString()}" SessionIndex="${sessionIndex}">` +
    "<saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport" +
    "</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>";
  const attributeStatement = `<saml:AttributeStatement>${[
    attributeXml("email", [person.email]),
    attributeXml("name", [person.name]),
    attributeXml("groups", person.groups),
  ].join("")}</saml:AttributeStatement>`;
  const answer = await (options.sha1 ? sha1Idp : idp).createLoginResponse(
    sp,
    { extract } as never,
    "post",
    { email: person.email },
    {
      customTagReplacement: (template: string) => {
        const context = samlify.SamlLib.replaceTagsByValue(template, {
          ID: `_${randomUUID()}`,
          AssertionID: assertionId,
          Destination: acsUrl,
          Audience: options.audience ?? spEntityId,
          SubjectRecipient: acsUrl,
          Issuer: SAML_IDP_ENTITY_ID,
          IssueInstant: new Date(now).toISOString(),
          StatusCode: "urn:oasis:names:tc:SAML:2.0:status:Success",
          ConditionsNotBefore: new Date(now - minute).toISOString(),
          ConditionsNotOnOrAfter: notOnOrAfter.toISOString(),
          SubjectConfirmationDataNotOnOrAfter: notOnOrAfter.toISOString(),
          NameIDFormat: EMAIL_FORMAT,
          NameID: person.email,
          InResponseTo: inResponseTo,
          AuthnStatement: "AUTHN_STATEMENT",
          AttributeStatement: "ATTRIBUTE_STATEMENT",
        })
          .replace("AUTHN_STATEMENT", authnStatement)
          .replace("ATTRIBUTE_STATEMENT", attributeStatement);
        return { id: assertionId, context };
      },
    },
  );
  let xml = Buffer.from(answer.context, "base64").toString("utf8");
  if (options.tamperNameId) {
    const signed = `>${escapeXml(person.email)}</saml:NameID>`;
    if (!xml.includes(signed)) throw new Error("no NameID to tamper with");
    xml = xml.replace(signed, `>${escapeXml(options.tamperNameId)}</saml:NameID>`);
  }
  return {
    SAMLResponse: Buffer.from(xml, "utf8").toString("base64"),
    RelayState: query.RelayState ?? null,
    acsUrl,
    requestId: request.id,
    assertionId,
  };
}

/**
 * `answer`, already used, made to look like the answer to the newer sign-in at `redirectUrl`: its Response's own
 * signature removed and its InResponseTo (and RelayState) set to the newer request's, its signed Assertion untouched,
 * as someone who copied a Response would try to get it accepted a second time.
 * @throws Error when `answer` has no Response signature to remove.
 */
export function rewrapSamlResponse(answer: SamlAnswer, redirectUrl: string): SamlAnswer {
  const query = Object.fromEntries(new URL(redirectUrl).searchParams);
  const request = inflateRawSync(Buffer.from(query.SAMLRequest ?? "", "base64")).toString("utf8");
  const requestId = /<(?:\w+:)?AuthnRequest\b[^>]*\sID="([^"]+)"/.exec(request)?.[1];
  if (!requestId) throw new Error("the redirect URL carries no AuthnRequest");
  const xml = Buffer.from(answer.SAMLResponse, "base64").toString("utf8");
  const head =
    /^(<samlp:Response\b[^>]*>)(<saml:Issuer>[^<]*<\/saml:Issuer>)(<ds:Signature\b[\s\S]*?<\/ds:Signature>)/.exec(xml);
  if (!head?.[1] || !head[2]) throw new Error("the Response is not signed as a whole");
  const opening = head[1].replace(/\sInResponseTo="[^"]*"/, ` InResponseTo="${requestId}"`);
  const rewrapped = `${opening}${head[2]}${xml.slice(head[0].length)}`;
  return {
    ...answer,
    SAMLResponse: Buffer.from(rewrapped, "utf8").toString("base64"),
    RelayState: query.RelayState ?? null,
    requestId,
  };
}

/** What a browser got from posting a SAML Response to our ACS URL, and where its redirect landed. */
export interface AcsLanding extends Landing {
  /** The ACS answer's status (a redirect, 302, when it took the Response in). */
  acsStatus: number;
  /** The ACS answer's `Set-Cookie` lines. */
  setCookies: string[];
}

/**
 * Posts `answer` to its ACS URL as the identity provider's auto-submitting form makes the browser do: a cross-site
 * top-level POST (`application/x-www-form-urlencoded`, `Origin` the identity provider's, Fetch Metadata
 * `cross-site`/`navigate`) through the Next route `app/api/auth/[...all]`, carrying none of our cookies (they are
 * SameSite=Lax); then follows the redirect with `cookie` and whatever the answer set.
 */
export async function postSamlResponse(answer: SamlAnswer, cookie = ""): Promise<AcsLanding> {
  const form = new URLSearchParams({ SAMLResponse: answer.SAMLResponse });
  if (answer.RelayState !== null) form.set("RelayState", answer.RelayState);
  const headers = new Headers({
    "content-type": "application/x-www-form-urlencoded",
    origin: SAML_IDP_ORIGIN,
    referer: `${SAML_IDP_ORIGIN}/`,
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
    "user-agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36",
  });
  headers.set(CLIENT_ADDRESS_HEADER, randomAddress());
  const response = await authRoute(new Request(answer.acsUrl, { method: "POST", headers, body: form.toString() }));
  const setCookies = response.headers.getSetCookie();
  const jar = cookieHeader(response.headers, cookie);
  const location = response.headers.get("location");
  if (response.status < 300 || response.status >= 400 || !location) {
    const body = await response.text();
    return {
      url: new URL(answer.acsUrl),
      status: response.status,
      cookie: jar,
      body,
      acsStatus: response.status,
      setCookies,
    };
  }
  const landed = await browse(new URL(location, answer.acsUrl).href, jar);
  return { ...landed, acsStatus: response.status, setCookies };
}

/** Whether `setCookies` (an answer's `Set-Cookie` lines) start a session: a session token that is not a deletion. */
export function setsSessionCookie(setCookies: string[]): boolean {
  return setCookies.some((line) => /session_token=[^;]/.test(line) && !/max-age=0/i.test(line));
}

/** {@link connectedOrg} with this identity provider connected over SAML from its metadata. */
export function connectSamlOrg(policy: Partial<TestPolicy> = {}) {
  return connectedOrg((owner) => owner.caller.sso.connectSaml({ metadataXml: samlIdpMetadataXml }), policy);
}
