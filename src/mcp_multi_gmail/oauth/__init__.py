"""Sign-in with Google (OAuth 2.0 for installed apps, XOAUTH2 on IMAP and SMTP).

`google`: the one POST to the token endpoint; `tokens`: the tokens file, its lock and the refresh;
`flow`: the one-time loopback sign-in's parts (PKCE, state, the listener, the code exchange);
`advice`: the messages when a sign-in cannot be used. The protocol layer logs in with what
`tokens.access_token` hands it; nothing here talks IMAP or SMTP.
"""
