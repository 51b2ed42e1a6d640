import { CUSTOM_FIELD_RESOURCES } from "../../../../server/records/custom-fields/schema";
import { ConfirmAction } from "../../_components/confirm-action";
import { Time } from "../../_components/time";
import { requireMember, settingsCaller } from "../../_lib/session";
import { archiveFieldAction, createFieldAction, updateFieldAction } from "./actions";
import { CreateFieldForm, EditFieldForm } from "./field-forms";

export const metadata = { title: "Custom fields · Settings" };

/**
 * The organisation's custom fields (docs/api-contract.md §2.13): every role sees them by resource; owners and admins
 * add, change and archive them (docs/api-contract.md §5.10), and the server refuses the others anyway.
 */
export default async function FieldsPage() {
  const me = await requireMember("/settings/fields");
  const manage = me.permissions["customField:manage"];
  const { fields, limits } = await (await settingsCaller()).customFields.list();
  return (
    <>
      <h1>Custom fields</h1>
      <p>
        Fields of your own on accounts, contacts, deals, devices and tasks: a contract tier, a seat count, your PSA's
        id. Every record carries their values in <code>customFields</code> in the API, its events and webhooks; lists
        filter and sort by them (<code>customFields.tier=gold</code>). Each kind of record has at most{" "}
        {limits.activePerResource} active fields. Archiving a field removes its values from every record at once; they
        are deleted for good {limits.purgeAfterDays} days later.
      </p>
      {manage ? null : (
        <p className="muted" data-testid="read-only-note">
          Your role ({me.role}) can see custom fields; owners and admins add, change and archive them.
        </p>
      )}

      {CUSTOM_FIELD_RESOURCES.map((resource) => {
        const mine = fields.filter((field) => field.resource === resource);
        const active = mine.filter((field) => field.archivedAt === null).length;
        return (
          <section key={resource} aria-labelledby={`fields-${resource}`}>
            <h2 id={`fields-${resource}`}>
              {resource[0]?.toUpperCase()}
              {resource.slice(1)}s ({active} of {limits.activePerResource})
            </h2>
            {mine.length === 0 ? (
              <p className="muted">No custom fields on {resource}s yet.</p>
            ) : (
              <ul className="key-list">
                {mine.map((field) => (
                  <li key={field.id} className="card" data-testid="field-card" aria-labelledby={`field-${field.id}`}>
                    <h3 id={`field-${field.id}`}>{field.label}</h3>
                    <p className="actions">
                      <span className="badge">{field.type}</span>
                      {field.required ? <span className="badge warn">required</span> : null}
                      {field.searchable ? <span className="badge">searchable</span> : null}
                      {field.archivedAt ? (
                        <span className="badge error">archived</span>
                      ) : (
                        <span className="badge ok">active</span>
                      )}
                    </p>
                    <dl className="meta">
                      <dt>Key</dt>
                      <dd>
                        <code>customFields.{field.key}</code>
                      </dd>
                      {field.description ? (
                        <>
                          <dt>Description</dt>
                          <dd>{field.description}</dd>
                        </>
                      ) : null}
                      {field.options ? (
                        <>
                          <dt>Options</dt>
                          <dd>
                            <ul className="scope-list">
                              {field.options.map((option) => (
                                <li key={option.value}>
                                  <code>{option.value}</code> {option.label}
                                  {option.archivedAt ? <span className="muted"> (archived)</span> : null}
                                </li>
                              ))}
                            </ul>
                          </dd>
                        </>
                      ) : null}
                      <dt>Created</dt>
                      <dd>
                        <Time value={field.createdAt} />
                      </dd>
                      {field.archivedAt ? (
                        <>
                          <dt>Archived</dt>
                          <dd>
                            <Time value={field.archivedAt} />
                          </dd>
                        </>
                      ) : null}
                    </dl>
                    {manage && !field.archivedAt ? (
                      <details>
                        <summary>Edit {field.label}…</summary>
                        <EditFieldForm action={updateFieldAction} field={field} />
                      </details>
                    ) : null}
                    {manage ? (
                      <ConfirmAction
                        action={archiveFieldAction}
                        summary="Archive…"
                        explanation={`Removes ${field.label} from every ${resource} now and refuses new values; its values are deleted for good in ${limits.purgeAfterDays} days, when its key is free again.`}
                        submitLabel={`Archive ${field.label}`}
                        pendingLabel="Archiving…"
                        danger
                        showButton={!field.archivedAt}
                      >
                        <input type="hidden" name="id" value={field.id} />
                      </ConfirmAction>
                    ) : null}
                  </li>
                ))}
              </ul>
            )}
          </section>
        );
      })}

      {manage ? (
        <section aria-labelledby="new-field-heading">
          <h2 id="new-field-heading">Add a field</h2>
          <CreateFieldForm action={createFieldAction} resources={CUSTOM_FIELD_RESOURCES} />
        </section>
      ) : null}
    </>
  );
}
