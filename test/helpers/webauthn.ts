// A software WebAuthn authenticator for the integration tests: it makes a P-256 key pair and answers the passkey
// ceremonies of /api/auth/passkey/… as a browser's authenticator would, with the flags a test chooses, so a test can
// send what a real security key without a PIN sends (user present, not verified: flags 0x01) and see the server's
// answer. The attestation is `none`; CBOR (RFC 8949) is written here for the three shapes WebAuthn needs.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { POST as authRoute } from "../../app/api/auth/[...all]/route";
import { prisma } from "../../server/db/transaction";
import { cookieHeader, TEST_ORIGIN } from "./members";

/** Authenticator data flags (WebAuthn §6.1): user present, user verified, attested credential data included. */
export const FLAGS = { UP: 0x01, UV: 0x04, AT: 0x40 } as const;

type Cbor = number | string | Uint8Array | Cbor[] | Map<number | string, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) return Buffer.from([(major << 5) | 25, length >> 8, length & 0xff]);
  const buffer = Buffer.alloc(5);
  buffer[0] = (major << 5) | 26;
  buffer.writeUInt32BE(length, 1);
  return buffer;
}

function cbor(value: Cbor): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") {
    const text = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, text.length), text]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([key, item]) => [cbor(key), cbor(item)])]);
}

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
const b64url = (data: Uint8Array) => Buffer.from(data).toString("base64url");

/** A passkey held by the test: its credential id, COSE public key and signature counter. */
export class SoftPasskey {
  readonly credentialId = randomBytes(16);
  private readonly privateKey: KeyObject;
  /** The public key as COSE_Key (RFC 9053: EC2, ES256, P-256), as the server stores it. */
  readonly cosePublicKey: Buffer;
  private counter = 0;

  constructor(private readonly rpId = new URL(TEST_ORIGIN).hostname) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: "jwk" });
    this.cosePublicKey = cbor(
      new Map<number, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, "base64url")],
        [-3, Buffer.from(jwk.y as string, "base64url")],
      ]),
    );
  }

  private authenticatorData(flags: number, attested: boolean): Buffer {
    this.counter += 1;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(this.counter);
    const parts: Buffer[] = [sha256(this.rpId), Buffer.from([flags | (attested ? FLAGS.AT : 0)]), count];
    if (attested) {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(this.credentialId.length);
      parts.push(Buffer.alloc(16), length, this.credentialId, this.cosePublicKey);
    }
    return Buffer.concat(parts);
  }

  private clientData(type: "webauthn.create" | "webauthn.get", challenge: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin: TEST_ORIGIN, crossOrigin: false }));
  }

  /** The browser's `navigator.credentials.create()` answer to registration options, as JSON for the server. */
  attestation(challenge: string, flags: number) {
    const authData = this.authenticatorData(flags, true);
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    return {
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64url(this.clientData("webauthn.create", challenge)),
        attestationObject: b64url(attestationObject),
        transports: ["internal"],
      },
      clientExtensionResults: {},
    };
  }

  /** The browser's `navigator.credentials.get()` answer to authentication options, signed with the private key. */
  assertion(challenge: string, flags: number) {
    const authenticatorData = this.authenticatorData(flags, false);
    const clientDataJSON = this.clientData("webauthn.get", challenge);
    const signature = sign("sha256", Buffer.concat([authenticatorData, sha256(clientDataJSON)]), this.privateKey);
    return {
      id: b64url(this.credentialId),
      rawId: b64url(this.credentialId),
      type: "public-key",
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authenticatorData),
        signature: b64url(signature),
      },
      clientExtensionResults: {},
    };
  }

  /** Stores this passkey for a user as a registration would (for tests about what happens once one exists). */
  async storeFor(userId: string): Promise<void> {
    await prisma().passkey.create({
      data: {
        id: `pk_${randomBytes(8).toString("hex")}`,
        name: "Soft passkey",
        publicKey: this.cosePublicKey.toString("base64"),
        userId,
        credentialID: b64url(this.credentialId),
        counter: 0,
        deviceType: "singleDevice",
        backedUp: false,
      },
    });
  }
}

/** A browser's call of `/api/auth/passkey/<path>` on the test origin, with its cookies; answers and the cookies after. */
async function passkeyCall(path: string, cookie: string, body?: unknown) {
  const headers: Record<string, string> = { origin: TEST_ORIGIN };
  if (cookie) headers.cookie = cookie;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await authRoute(
    new Request(`${TEST_ORIGIN}/api/auth/passkey/${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { response, cookie: cookieHeader(response.headers, cookie) };
}

/**
 * Signs in with `passkey` as the sign-in page does (options, then the assertion with `flags`), from a browser holding
 * `cookie` (empty for a browser signed out). @returns the verification's response and the browser's cookies after it.
 */
export async function signInWithPasskey(passkey: SoftPasskey, flags: number, cookie = "") {
  const options = await passkeyCall("generate-authenticate-options", cookie);
  const { challenge, userVerification } = (await options.response.json()) as {
    challenge: string;
    userVerification?: string;
  };
  const verified = await passkeyCall("verify-authentication", options.cookie, {
    response: passkey.assertion(challenge, flags),
  });
  return { ...verified, userVerification };
}

/**
 * Registers `passkey` as the security page does (options, then the attestation with `flags`) for the member whose
 * session `cookie` carries. @returns the options' response (403 without a step-up), and the verification's when the
 * options were given.
 */
export async function registerPasskey(passkey: SoftPasskey, flags: number, cookie: string) {
  const options = await passkeyCall("generate-register-options", cookie);
  if (!options.response.ok) return { options: options.response, verified: null };
  const body = (await options.response.json()) as {
    challenge: string;
    authenticatorSelection?: { userVerification?: string };
  };
  const verified = await passkeyCall("verify-registration", options.cookie, {
    response: passkey.attestation(body.challenge, flags),
    name: "Soft passkey",
  });
  return { options: options.response, userVerification: body.authenticatorSelection?.userVerification, verified };
}
