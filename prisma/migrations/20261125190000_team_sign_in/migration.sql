-- Settings on better-auth: members with roles, invitations, two-factor, passkeys, the settings audit trail.
-- Moves each existing user into the new shape as an owner of the organisation they belonged to; their bcrypt
-- password hash becomes a credential account (verified as is, replaced by scrypt at the next sign-in). Sessions of
-- the old cookie cannot be carried over: they end, and users sign in once again.
-- Every statement is guarded, so running this file again on a migrated database changes nothing.

-- AlterTable
ALTER TABLE "Organisation" ADD COLUMN IF NOT EXISTS "logo" TEXT,
ADD COLUMN IF NOT EXISTS "metadata" TEXT,
ADD COLUMN IF NOT EXISTS "requireTwoFactor" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "User" ADD COLUMN IF NOT EXISTS "emailVerified" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN IF NOT EXISTS "image" TEXT,
ADD COLUMN IF NOT EXISTS "twoFactorEnabled" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE IF NOT EXISTS "AuthAccount" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "accessToken" TEXT,
    "refreshToken" TEXT,
    "idToken" TEXT,
    "accessTokenExpiresAt" TIMESTAMP(3),
    "refreshTokenExpiresAt" TIMESTAMP(3),
    "scope" TEXT,
    "password" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AuthAccount_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE IF NOT EXISTS "Verification" (
    "id" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE IF NOT EXISTS "Member" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Member_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE IF NOT EXISTS "Invitation" (
    "id" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "inviterId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Invitation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE IF NOT EXISTS "TwoFactor" (
    "id" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "backupCodes" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "verified" BOOLEAN DEFAULT true,
    "failedVerificationCount" INTEGER DEFAULT 0,
    "lockedUntil" TIMESTAMP(3),

    CONSTRAINT "TwoFactor_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE IF NOT EXISTS "Passkey" (
    "id" TEXT NOT NULL,
    "name" TEXT,
    "publicKey" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "credentialID" TEXT NOT NULL,
    "counter" INTEGER NOT NULL,
    "deviceType" TEXT NOT NULL,
    "backedUp" BOOLEAN NOT NULL,
    "transports" TEXT,
    "createdAt" TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP,
    "aaguid" TEXT,

    CONSTRAINT "Passkey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE IF NOT EXISTS "SettingsAuditEntry" (
    "id" BIGSERIAL NOT NULL,
    "orgId" TEXT,
    "actorUserId" TEXT,
    "actorEmail" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "details" JSONB,
    "ip" TEXT,
    "userAgent" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SettingsAuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX IF NOT EXISTS "AuthAccount_userId_idx" ON "AuthAccount"("userId");
CREATE INDEX IF NOT EXISTS "Verification_identifier_idx" ON "Verification"("identifier");
CREATE INDEX IF NOT EXISTS "Member_userId_idx" ON "Member"("userId");
CREATE UNIQUE INDEX IF NOT EXISTS "Member_orgId_userId_key" ON "Member"("orgId", "userId");
CREATE INDEX IF NOT EXISTS "Invitation_orgId_status_idx" ON "Invitation"("orgId", "status");
CREATE INDEX IF NOT EXISTS "Invitation_email_idx" ON "Invitation"("email");
CREATE INDEX IF NOT EXISTS "TwoFactor_userId_idx" ON "TwoFactor"("userId");
CREATE INDEX IF NOT EXISTS "TwoFactor_secret_idx" ON "TwoFactor"("secret");
CREATE INDEX IF NOT EXISTS "Passkey_userId_idx" ON "Passkey"("userId");
CREATE INDEX IF NOT EXISTS "Passkey_credentialID_idx" ON "Passkey"("credentialID");
CREATE INDEX IF NOT EXISTS "SettingsAuditEntry_orgId_createdAt_id_idx" ON "SettingsAuditEntry"("orgId", "createdAt", "id");
CREATE INDEX IF NOT EXISTS "SettingsAuditEntry_orgId_actorUserId_createdAt_idx" ON "SettingsAuditEntry"("orgId", "actorUserId", "createdAt");
CREATE INDEX IF NOT EXISTS "SettingsAuditEntry_orgId_action_createdAt_idx" ON "SettingsAuditEntry"("orgId", "action", "createdAt");

-- Move the users of the old shape (User.orgId, User.passwordHash): owner of their organisation, a credential
-- account with their password hash, a name where they had none.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = 'User' AND column_name = 'orgId') THEN
    EXECUTE $move$
      INSERT INTO "Member" ("id", "orgId", "userId", "role", "createdAt")
      SELECT 'mig' || u."id", u."orgId", u."id", 'owner', u."createdAt" FROM "User" u
      ON CONFLICT ("orgId", "userId") DO NOTHING
    $move$;
    EXECUTE $move$
      INSERT INTO "AuthAccount" ("id", "accountId", "providerId", "userId", "password", "createdAt", "updatedAt")
      SELECT 'mig' || u."id", u."id", 'credential', u."id", u."passwordHash", u."createdAt", CURRENT_TIMESTAMP
      FROM "User" u
      WHERE NOT EXISTS (SELECT 1 FROM "AuthAccount" a WHERE a."userId" = u."id" AND a."providerId" = 'credential')
    $move$;
    UPDATE "User" SET "name" = split_part("email", '@', 1) WHERE "name" IS NULL OR btrim("name") = '';
    ALTER TABLE "User" DROP CONSTRAINT IF EXISTS "User_orgId_fkey";
    DROP INDEX IF EXISTS "User_orgId_idx";
    ALTER TABLE "User" DROP COLUMN "orgId", DROP COLUMN IF EXISTS "passwordHash";
  END IF;
END $$;

-- AlterTable
ALTER TABLE "User" ALTER COLUMN "name" SET NOT NULL;

-- The old sessions (a SHA-256 of the old cookie as id) cannot be reached by the new cookie: they end.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM information_schema.columns
                 WHERE table_schema = current_schema() AND table_name = 'Session' AND column_name = 'token') THEN
    DELETE FROM "Session";
  END IF;
END $$;

-- AlterTable
ALTER TABLE "Session" ADD COLUMN IF NOT EXISTS "activeOrgId" TEXT,
ADD COLUMN IF NOT EXISTS "ipAddress" TEXT,
ADD COLUMN IF NOT EXISTS "lastSeenAt" TIMESTAMP(3),
ADD COLUMN IF NOT EXISTS "reauthenticatedAt" TIMESTAMP(3),
ADD COLUMN IF NOT EXISTS "token" TEXT NOT NULL,
ADD COLUMN IF NOT EXISTS "updatedAt" TIMESTAMP(3) NOT NULL,
ADD COLUMN IF NOT EXISTS "userAgent" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX IF NOT EXISTS "Session_token_key" ON "Session"("token");

-- AddForeignKey
DO $$
DECLARE
  fk RECORD;
BEGIN
  FOR fk IN SELECT * FROM (VALUES
    ('AuthAccount', 'AuthAccount_userId_fkey', '("userId") REFERENCES "User"("id")'),
    ('Member', 'Member_orgId_fkey', '("orgId") REFERENCES "Organisation"("id")'),
    ('Member', 'Member_userId_fkey', '("userId") REFERENCES "User"("id")'),
    ('Invitation', 'Invitation_orgId_fkey', '("orgId") REFERENCES "Organisation"("id")'),
    ('Invitation', 'Invitation_inviterId_fkey', '("inviterId") REFERENCES "User"("id")'),
    ('TwoFactor', 'TwoFactor_userId_fkey', '("userId") REFERENCES "User"("id")'),
    ('Passkey', 'Passkey_userId_fkey', '("userId") REFERENCES "User"("id")'),
    ('SettingsAuditEntry', 'SettingsAuditEntry_orgId_fkey', '("orgId") REFERENCES "Organisation"("id")')
  ) AS t(tbl, name, definition) LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = fk.name) THEN
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I FOREIGN KEY %s ON DELETE CASCADE ON UPDATE CASCADE',
        fk.tbl, fk.name, fk.definition);
    END IF;
  END LOOP;
END $$;
