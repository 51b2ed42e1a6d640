// Mail to settings users (docs/architecture.md, "Settings: sign-in, team and roles"): invitations and password-reset
// links, through nodemailer when SMTP_URL and MAIL_FROM are set. The pages and the admin command show every link
// anyway, so mail is a convenience and a failure to send never undoes what was done.
import nodemailer, { type Transporter } from "nodemailer";
import { env } from "../env";

/** One message: plain text, no tracking, no HTML. */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

const holder = globalThis as unknown as { __crmMailer?: { url: string; transport: Transporter } };

/** Whether mail is configured: both `SMTP_URL` and `MAIL_FROM` set. */
export function mailConfigured(): boolean {
  const config = env();
  return Boolean(config.SMTP_URL && config.MAIL_FROM);
}

function transport(url: string): Transporter {
  if (holder.__crmMailer?.url !== url) holder.__crmMailer = { url, transport: nodemailer.createTransport(url) };
  return holder.__crmMailer.transport;
}

/**
 * Sends `mail` from `MAIL_FROM` through `SMTP_URL`.
 * @returns `sent`, `not-configured` (nothing to send with) or `failed` (logged as one JSON line with the reason;
 *          the caller shows the link instead).
 */
export async function sendMail(mail: Mail): Promise<"sent" | "not-configured" | "failed"> {
  const config = env();
  if (!config.SMTP_URL || !config.MAIL_FROM) return "not-configured";
  try {
    await transport(config.SMTP_URL).sendMail({ from: config.MAIL_FROM, ...mail });
    return "sent";
  } catch (error) {
    console.error(
      JSON.stringify({ level: "error", message: "mail not sent", subject: mail.subject, error: String(error) }),
    );
    return "failed";
  }
}
