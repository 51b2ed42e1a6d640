-- Provisioning (docs/api-contract.md §11.5): the tables of @better-auth/scim 1.7.5 with its managed connection
-- catalog; provisioningDomainId is the organisation's id, so an organisation's SCIM rows are deleted with it.

-- CreateTable
CREATE TABLE "ScimConnectionBinding" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "connectionKey" TEXT NOT NULL,
    "provisioningDomainId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "decommissionedAt" TIMESTAMP(3),
    "decommissionStatus" TEXT NOT NULL DEFAULT 'active',
    "decommissionCursorUserId" TEXT,
    "decommissionReconciledUserCount" INTEGER NOT NULL DEFAULT 0,
    "decommissionBatchCount" INTEGER NOT NULL DEFAULT 0,
    "decommissionRevision" INTEGER NOT NULL DEFAULT 0,
    "decommissionCompletedAt" TIMESTAMP(3),
    "decommissionLeaseId" TEXT,
    "decommissionLeaseExpiresAt" TIMESTAMP(3),

    CONSTRAINT "ScimConnectionBinding_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimIdentityTombstone" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "provisioningDomainId" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "externalIdKey" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "profile" TEXT NOT NULL,
    "deletedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimIdentityTombstone_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimSubject" (
    "id" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "profileSourceId" TEXT,
    "revision" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimSubject_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimUser" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "provisioningDomainId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "connectionUserKey" TEXT NOT NULL,
    "userName" TEXT NOT NULL,
    "userNameKey" TEXT NOT NULL,
    "primaryEmail" TEXT NOT NULL,
    "workEmailValueIndex" TEXT NOT NULL,
    "emailValueIndex" TEXT NOT NULL,
    "displayName" TEXT NOT NULL,
    "formattedName" TEXT NOT NULL,
    "givenName" TEXT,
    "familyName" TEXT,
    "serializedEmails" TEXT NOT NULL,
    "serializedAttributes" TEXT,
    "externalId" TEXT,
    "externalIdKey" TEXT,
    "active" BOOLEAN NOT NULL,
    "orderKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimUser_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimProjectionGrant" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "provisioningDomainId" TEXT NOT NULL,
    "scimUserId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "sourceKind" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "sourceValue" TEXT,
    "role" TEXT NOT NULL,
    "grantKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimProjectionGrant_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimGroup" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "provisioningDomainId" TEXT NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 0,
    "displayName" TEXT NOT NULL,
    "displayNameKey" TEXT NOT NULL,
    "externalId" TEXT,
    "externalIdKey" TEXT,
    "orderKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimGroup_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimGroupMember" (
    "id" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "groupId" TEXT NOT NULL,
    "scimUserId" TEXT NOT NULL,
    "membershipKey" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimGroupMember_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimManagedConnection" (
    "id" TEXT NOT NULL,
    "creationRequestId" TEXT NOT NULL,
    "connectionId" TEXT NOT NULL,
    "provisioningDomainId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "revision" INTEGER NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "createdBy" TEXT NOT NULL,
    "decommissionStartedAt" TIMESTAMP(3),
    "decommissionStartedBy" TEXT,
    "decommissionedAt" TIMESTAMP(3),
    "decommissionedBy" TEXT,

    CONSTRAINT "ScimManagedConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimManagedCredential" (
    "id" TEXT NOT NULL,
    "connectionRecordId" TEXT NOT NULL,
    "credentialId" TEXT NOT NULL,
    "tokenDigest" TEXT NOT NULL,
    "hashVersion" TEXT NOT NULL,
    "activeSlotKey" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "serializedScopes" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "createdBy" TEXT NOT NULL,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    "revokedBy" TEXT,
    "decommissionedAt" TIMESTAMP(3),

    CONSTRAINT "ScimManagedCredential_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScimManagedConnectionEvent" (
    "id" TEXT NOT NULL,
    "connectionRecordId" TEXT NOT NULL,
    "eventKey" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "actorId" TEXT NOT NULL,
    "credentialId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScimManagedConnectionEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ScimConnectionBinding_connectionKey_key" ON "ScimConnectionBinding"("connectionKey");

-- CreateIndex
CREATE INDEX "ScimConnectionBinding_connectionId_idx" ON "ScimConnectionBinding"("connectionId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimIdentityTombstone_externalIdKey_key" ON "ScimIdentityTombstone"("externalIdKey");

-- CreateIndex
CREATE INDEX "ScimIdentityTombstone_connectionId_idx" ON "ScimIdentityTombstone"("connectionId");

-- CreateIndex
CREATE INDEX "ScimIdentityTombstone_provisioningDomainId_idx" ON "ScimIdentityTombstone"("provisioningDomainId");

-- CreateIndex
CREATE INDEX "ScimIdentityTombstone_userId_idx" ON "ScimIdentityTombstone"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimSubject_userId_key" ON "ScimSubject"("userId");

-- CreateIndex
CREATE INDEX "ScimSubject_profileSourceId_idx" ON "ScimSubject"("profileSourceId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimUser_connectionUserKey_key" ON "ScimUser"("connectionUserKey");

-- CreateIndex
CREATE UNIQUE INDEX "ScimUser_userNameKey_key" ON "ScimUser"("userNameKey");

-- CreateIndex
CREATE UNIQUE INDEX "ScimUser_externalIdKey_key" ON "ScimUser"("externalIdKey");

-- CreateIndex
CREATE UNIQUE INDEX "ScimUser_orderKey_key" ON "ScimUser"("orderKey");

-- CreateIndex
CREATE INDEX "ScimUser_connectionId_idx" ON "ScimUser"("connectionId");

-- CreateIndex
CREATE INDEX "ScimUser_provisioningDomainId_idx" ON "ScimUser"("provisioningDomainId");

-- CreateIndex
CREATE INDEX "ScimUser_userId_idx" ON "ScimUser"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimProjectionGrant_grantKey_key" ON "ScimProjectionGrant"("grantKey");

-- CreateIndex
CREATE INDEX "ScimProjectionGrant_connectionId_idx" ON "ScimProjectionGrant"("connectionId");

-- CreateIndex
CREATE INDEX "ScimProjectionGrant_provisioningDomainId_idx" ON "ScimProjectionGrant"("provisioningDomainId");

-- CreateIndex
CREATE INDEX "ScimProjectionGrant_scimUserId_idx" ON "ScimProjectionGrant"("scimUserId");

-- CreateIndex
CREATE INDEX "ScimProjectionGrant_userId_idx" ON "ScimProjectionGrant"("userId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimGroup_displayNameKey_key" ON "ScimGroup"("displayNameKey");

-- CreateIndex
CREATE UNIQUE INDEX "ScimGroup_externalIdKey_key" ON "ScimGroup"("externalIdKey");

-- CreateIndex
CREATE UNIQUE INDEX "ScimGroup_orderKey_key" ON "ScimGroup"("orderKey");

-- CreateIndex
CREATE INDEX "ScimGroup_connectionId_idx" ON "ScimGroup"("connectionId");

-- CreateIndex
CREATE INDEX "ScimGroup_provisioningDomainId_idx" ON "ScimGroup"("provisioningDomainId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimGroupMember_membershipKey_key" ON "ScimGroupMember"("membershipKey");

-- CreateIndex
CREATE INDEX "ScimGroupMember_connectionId_idx" ON "ScimGroupMember"("connectionId");

-- CreateIndex
CREATE INDEX "ScimGroupMember_groupId_idx" ON "ScimGroupMember"("groupId");

-- CreateIndex
CREATE INDEX "ScimGroupMember_scimUserId_idx" ON "ScimGroupMember"("scimUserId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimManagedConnection_creationRequestId_key" ON "ScimManagedConnection"("creationRequestId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimManagedConnection_connectionId_key" ON "ScimManagedConnection"("connectionId");

-- CreateIndex
CREATE INDEX "ScimManagedConnection_provisioningDomainId_idx" ON "ScimManagedConnection"("provisioningDomainId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimManagedCredential_credentialId_key" ON "ScimManagedCredential"("credentialId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimManagedCredential_activeSlotKey_key" ON "ScimManagedCredential"("activeSlotKey");

-- CreateIndex
CREATE INDEX "ScimManagedCredential_connectionRecordId_idx" ON "ScimManagedCredential"("connectionRecordId");

-- CreateIndex
CREATE UNIQUE INDEX "ScimManagedConnectionEvent_eventKey_key" ON "ScimManagedConnectionEvent"("eventKey");

-- CreateIndex
CREATE INDEX "ScimManagedConnectionEvent_connectionRecordId_idx" ON "ScimManagedConnectionEvent"("connectionRecordId");

-- AddForeignKey
ALTER TABLE "ScimConnectionBinding" ADD CONSTRAINT "ScimConnectionBinding_provisioningDomainId_fkey" FOREIGN KEY ("provisioningDomainId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimIdentityTombstone" ADD CONSTRAINT "ScimIdentityTombstone_provisioningDomainId_fkey" FOREIGN KEY ("provisioningDomainId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimIdentityTombstone" ADD CONSTRAINT "ScimIdentityTombstone_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimSubject" ADD CONSTRAINT "ScimSubject_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimUser" ADD CONSTRAINT "ScimUser_provisioningDomainId_fkey" FOREIGN KEY ("provisioningDomainId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimUser" ADD CONSTRAINT "ScimUser_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimProjectionGrant" ADD CONSTRAINT "ScimProjectionGrant_scimUserId_fkey" FOREIGN KEY ("scimUserId") REFERENCES "ScimUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimProjectionGrant" ADD CONSTRAINT "ScimProjectionGrant_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimGroup" ADD CONSTRAINT "ScimGroup_provisioningDomainId_fkey" FOREIGN KEY ("provisioningDomainId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimGroupMember" ADD CONSTRAINT "ScimGroupMember_groupId_fkey" FOREIGN KEY ("groupId") REFERENCES "ScimGroup"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimGroupMember" ADD CONSTRAINT "ScimGroupMember_scimUserId_fkey" FOREIGN KEY ("scimUserId") REFERENCES "ScimUser"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimManagedConnection" ADD CONSTRAINT "ScimManagedConnection_provisioningDomainId_fkey" FOREIGN KEY ("provisioningDomainId") REFERENCES "Organisation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimManagedCredential" ADD CONSTRAINT "ScimManagedCredential_connectionRecordId_fkey" FOREIGN KEY ("connectionRecordId") REFERENCES "ScimManagedConnection"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ScimManagedConnectionEvent" ADD CONSTRAINT "ScimManagedConnectionEvent_connectionRecordId_fkey" FOREIGN KEY ("connectionRecordId") REFERENCES "ScimManagedConnection"("id") ON DELETE CASCADE ON UPDATE CASCADE;
