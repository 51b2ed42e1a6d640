import { canonicalAddress } from "../../../server/platform/client-address";

/**
 * A client address as every settings page shows it (the sessions and the audit trail alike): the service's one text
 * for it (`::1`, never `0000:…:0001`; docs/architecture.md, "The REST facade"), "unknown" when none was recorded. An
 * IPv6 address may break after a colon, so its up to 39 characters never widen a table past the page; IPv4 never
 * breaks.
 */
export function Address({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">unknown</span>;
  const [first, ...rest] = (canonicalAddress(value) ?? value).split(":");
  return (
    <span>
      {first}
      {rest.map((group, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the groups of one address, in their fixed order
        <span key={index}>
          :<wbr />
          {group}
        </span>
      ))}
    </span>
  );
}
