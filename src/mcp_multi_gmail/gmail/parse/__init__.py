"""Pure parsing of what Gmail's IMAP hands back: headers, ENVELOPE, BODYSTRUCTURE, bodies.

No sockets here. Every function is tolerant: mail is written by strangers, so malformed input
degrades to None / empty / replacement characters instead of raising. Every string that comes
out of a mail passes `text.clean`, so hidden or direction-reversing characters never reach the
assistant.

- `charsets`: declared charsets to codecs, IMAP atoms to text;
- `encoded_words`: RFC 2047 header words;
- `envelope`: Message-IDs, address lists, ENVELOPE;
- `bodystructure`: BODYSTRUCTURE leaves, the body part, the attachments (RFC 2231 parameters);
- `transfer`: base64 / quoted-printable, text parts as text;
- `authresults`: Gmail's Authentication-Results verdict (RFC 8601);
- `filenames`: attachment names safe on every OS;
- `statequery`: the read, star, inbox and label terms of a search query, to check a hit against
  the state fetched with it (the query is the one thing here that is not Gmail's answer).
"""
