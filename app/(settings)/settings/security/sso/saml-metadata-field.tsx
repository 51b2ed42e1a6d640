"use client";

import { useRef, useState } from "react";

/** Largest metadata file read: 100 KiB, the server's bound (server/identity/sso/settings.ts). */
const MAX_BYTES = 102_400;

/**
 * The SAML metadata XML: a textarea to paste it into, and a file chooser whose file is read as text into the textarea
 * (refused above 100 KiB before anything is sent). Without scripts the file is posted as it is and the server reads it.
 */
export function SamlMetadataField() {
  const text = useRef<HTMLTextAreaElement>(null);
  const [note, setNote] = useState<{ error: boolean; message: string } | null>(null);

  async function read(event: React.ChangeEvent<HTMLInputElement>) {
    const file = event.currentTarget.files?.[0];
    if (!file) return;
    if (file.size > MAX_BYTES) {
      setNote({ error: true, message: `${file.name} is larger than 100 KiB: it is not IdP metadata` });
      event.currentTarget.value = "";
      return;
    }
    if (text.current) text.current.value = await file.text();
    setNote({
      error: false,
      message: `Read ${file.name} (${file.size.toLocaleString("en")} bytes) into the box above.`,
    });
  }

  return (
    <>
      <div className="field">
        <label htmlFor="saml-metadata">Identity provider metadata XML</label>
        <textarea
          id="saml-metadata"
          name="metadataXml"
          rows={6}
          spellCheck={false}
          aria-describedby="saml-metadata-hint"
          placeholder='<EntityDescriptor xmlns="urn:oasis:names:tc:SAML:2.0:metadata" …>'
        />
        <p id="saml-metadata-hint" className="hint">
          Paste it, or choose the file below (at most 100 KiB). The service never fetches a metadata URL: open it in a
          browser and save the XML.
        </p>
      </div>
      <div className="field">
        <label htmlFor="saml-metadata-file">Metadata file</label>
        <input
          id="saml-metadata-file"
          name="metadataFile"
          type="file"
          accept=".xml,text/xml,application/xml"
          onChange={read}
        />
        <div aria-live="polite">
          {note ? <p className={note.error ? "alert error" : "hint"}>{note.message}</p> : null}
        </div>
      </div>
    </>
  );
}
