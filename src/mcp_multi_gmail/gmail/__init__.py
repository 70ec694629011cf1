"""Protocol layer: the only place that talks IMAP (imapclient) and SMTP (aiosmtplib)."""
