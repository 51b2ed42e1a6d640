// A local SMTP server (smtp-server) that keeps every message it is sent, for the tests of what the service mails
// (invitations, webhook alerts): the service is pointed at it with SMTP_URL and MAIL_FROM.
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { resetEnvCache } from "../../server/env";

/** One message the sink got: the envelope's sender and recipients, and the message as sent. */
export interface Mail {
  from: string;
  to: string[];
  raw: string;
}

/** A running sink: what it got so far, and a way to stop it. */
export interface MailSink {
  inbox: Mail[];
  close(): Promise<void>;
}

/** Starts the sink on 127.0.0.1 and points the service at it (`SMTP_URL`, `MAIL_FROM` "MSP CRM <crm@example.com>"). */
export async function startMailSink(): Promise<MailSink> {
  const inbox: Mail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((to) => to.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        callback();
      });
    },
  });
  smtp.listen(0, "127.0.0.1");
  await once(smtp.server, "listening");
  process.env.SMTP_URL = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
  process.env.MAIL_FROM = "MSP CRM <crm@example.com>";
  resetEnvCache();
  return { inbox, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}

/** The text of a quoted-printable message body, as a mail client shows it. */
export function decoded(raw: string): string {
  return raw
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}
