"""The words of the guided tour, in Czech and English (the tour's steps are in `tour`)."""

from __future__ import annotations

from typing import Literal

Lang = Literal["cs", "en"]

TEXT: dict[Lang, dict[str, str]] = {
    "cs": {
        "title": "mcp-multi-gmail – prohlídka na ukázkových schránkách",
        "intro": (
            "Vestavěný emulátor Gmailu běží jen na tomto počítači (žádný účet Google, nic neodchází ven).\n"
            "Server mcp-multi-gmail běží jako samostatný proces a prohlídka s ním mluví přes MCP,\n"
            "stejně jako Claude Code. Server nabízí {tools} nástrojů."
        ),
        "step1": "1) Schránky – mg_list_accounts (verify: true)",
        "processed": "zpracované: štítek „{label}“",
        "no_processed": "bez štítku zpracovaného",
        "classes": "{labels}",
        "can_send": "smí odesílat",
        "shared": "sdílená",
        "inbox": "jen Doručená pošta",
        "unread": "jen nepřečtené",
        "mine": "moje přiřazení: {label}",
        "verified": "Přihlášení ověřeno: IMAP u všech {n} schránek, SMTP u {smtp}.",
        "smtp_port": "{account} (port {port})",
        "nobody": "žádné",
        "step2": "2) Průchod – mg_next_pass (osobni, since {since}, tedy před {days} dny)",
        "threads_found": "{threads} s novou prací:",
        "new_of": "nové {new} z {total}",
        "new_only": "nové {new}",
        "sent": "odesláno",
        "outgoing": "Čekající odchozí pošta: koncepty {drafts}, naplánované {scheduled} – to není práce, jen se hlásí.",
        "window_open": "window_clear: false – v okně zbývá nezpracovaná pošta, hranice zůstává na místě.",
        "step3": "3) Celé vlákno – mg_get_thread („{subject}“)",
        "more_than_shown": (
            "Průchod ukázal {new}, vlákno jich má {total} – víc zpráv, než průchod ukázal,\n"
            "proto ho asistent čte celé (kontext, zařazení „{classes}“ je na starších zprávách)."
        ),
        "participants": "Účastníci: {names}",
        "thread_state": "Zpracovaných {done}, nezpracovaná {new}: {who}, {ago}.",
        "step4": "4) Označit jako zpracované – mg_label_message (štítek „{label}“, {messages}, se since)",
        "labelled": "Změněno {changed}, už označeno {already}, selhalo {failed}.",
        "window_clear": "Okno podle nového průchodu: window_clear: true – hranici lze posunout na {at}.",
        "step5": "5) Průchod znovu – mg_next_pass (osobni, stejná hranice)",
        "empty": (
            "{threads} s prací, window_clear: true. Koncepty ({drafts}) a naplánované ({scheduled}) se dál jen hlásí."
        ),
        "moved": "Asistent si teď posune hranici na searched_at ({at}) a příště čte jen novou poštu.",
        "step6": '6) Hledání ve všech schránkách – mg_search_threads (account: "all", {query})',
        "search_total": "{threads}: {per} (odpověděly: {searched})",
        "search_more": "… a dalších {n}",
        "search_note": "Hledání slouží na „najdi tohle“; novou poštu zpracovává mg_next_pass.",
        "to_process": "nezpracované {n}",
        "step9": "9) Odpovědi, na které se čeká – mg_awaiting_replies a připomínka mg_remind",
        "away": "jen automatická odpověď, čeká dál (auto_reply_came: true)",
        "away_subject": "Automatická odpověď: jsem na horách",
        "away_body": "Do pondělí jsem mimo kancelář.",
        "due": "Připomínka {label}: průchod ji vrátí v reminders_due; po lhůtě {overdue} (awaiting_overdue).",
        "answer_subject": "Plán na svátky",
        "answer_body": "Přijedeme 24. odpoledne. Marie",
        "answered": "Odpověď „{subject}“ (nový předmět, In-Reply-To): čekání skončilo, připomínka ohlášena a sundána.",
        "step7": "7) Nová pošta v konverzaci – hlídač --follow (v Claude Code ho spouští nástroj Monitor)",
        "follow_started": "Hlídač hlídá osobni od {since}; teď přijde nová zpráva.",
        "follow_subject": "Objednávka dřeva na chatu",
        "follow_body": "Dobrý den, dřevo přivezu v sobotu dopoledne. Petr",
        "follow_line": "Doručeno „{subject}“; za {seconds} s hlídač vypsal řádek:",
        "follow_note": (
            "Monitor ho předá asistentovi jako událost. Předmět ani odesílatel v něm nejsou: co přišlo,\n"
            "zjistí asistent průchodem (mg_next_pass) a hlídač mezitím hlídá dál."
        ),
        "follow_stopped": "Hlídač zastaven (SIGTERM, jako když Claude Code končí) za {seconds} s.",
        "step8": "8) Pozvánka na schůzku – mg_get_message",
        "invite_subject": "Pozvánka: Plánování letní akce",
        "invite_summary": "Plánování letní akce",
        "invite_what": "„{summary}“, {day} {start}–{end} ({zone}), {location}",
        "invite_who": "Pořadatelka {organizer}; odpověď této schránky: {answer}",
        "invite_note": (
            "Odpověď (mg_respond_invitation) pošle asistent pořadatelce jen na pokyn uživatele;\ntady neodpovídá."
        ),
        "done": "Hotovo, prohlídka trvala {seconds} s.",
        "claude": "Vyzkoušejte server v Claude Code (ukázkové schránky, bez Googlu):",
        "readme": (
            "Skutečné schránky nastavíte podle README.md (oddíl Nastavení); "
            "průvodce pro asistenta je v docs/pro-asistenta.md."
        ),
        "failed": "chyba: prohlídka selhala v kroku {step}: {reason}",
        "failed_start": "chyba: prohlídka selhala: {reason}",
        "server_said": "Server na stderr napsal:",
        "tool_error": "nástroj {tool} vrátil chybu: {text}",
        "unexpected": "nečekaný výsledek: {what}",
        "minutes": "před {n} min",
        "hours": "před {n} h",
        "days": "před {n} dny",
        "future": "naplánováno",
        "repo_path": "<cesta k repozitáři>",
        "interrupted": "Prohlídka přerušena.",
    },
    "en": {
        "title": "mcp-multi-gmail – a tour of the sample mailboxes",
        "intro": (
            "The embedded Gmail emulator runs only on this computer (no Google account, nothing leaves it).\n"
            "The mcp-multi-gmail server runs as a separate process and this tour talks to it over MCP,\n"
            "just like Claude Code. The server offers {tools} tools."
        ),
        "step1": "1) Mailboxes – mg_list_accounts (verify: true)",
        "processed": 'processed: label "{label}"',
        "no_processed": "no processed label",
        "classes": "{labels}",
        "can_send": "may send",
        "shared": "shared",
        "inbox": "inbox only",
        "unread": "unread only",
        "mine": "my assignment: {label}",
        "verified": "Logins verified: IMAP for all {n} mailboxes, SMTP for {smtp}.",
        "smtp_port": "{account} (port {port})",
        "nobody": "none",
        "step2": "2) The pass – mg_next_pass (osobni, since {since}, i.e. {days} days ago)",
        "threads_found": "{threads} with new work:",
        "new_of": "{new} new of {total}",
        "new_only": "{new} new",
        "sent": "sent",
        "outgoing": "Pending outgoing mail: {drafts} draft(s), {scheduled} scheduled – not work, only reported.",
        "window_open": "window_clear: false – unprocessed mail is left in the window, the boundary stays put.",
        "step3": '3) The whole thread – mg_get_thread ("{subject}")',
        "more_than_shown": (
            "The pass showed {new}, the thread has {total} – more messages than shown,\n"
            'so the assistant reads it whole (context; the classification "{classes}" sits on older messages).'
        ),
        "participants": "Participants: {names}",
        "thread_state": "Processed {done}, unprocessed {new}: {who}, {ago}.",
        "step4": '4) Mark as processed – mg_label_message (label "{label}", {messages}, with since)',
        "labelled": "Changed {changed}, already labelled {already}, failed {failed}.",
        "window_clear": "The window as a new pass sees it: window_clear: true – the boundary may move to {at}.",
        "step5": "5) The pass again – mg_next_pass (osobni, same boundary)",
        "empty": (
            "{threads} with work, window_clear: true. "
            "Drafts ({drafts}) and scheduled ({scheduled}) are still only reported."
        ),
        "moved": "The assistant now moves the boundary to searched_at ({at}) and next time reads only new mail.",
        "step6": '6) Search across every mailbox – mg_search_threads (account: "all", {query})',
        "search_total": "{threads}: {per} (answered: {searched})",
        "search_more": "… and {n} more",
        "search_note": 'Search is for "find this"; new mail is worked through with mg_next_pass.',
        "to_process": "{n} unprocessed",
        "step9": "9) Replies the user is waiting for – mg_awaiting_replies and a reminder with mg_remind",
        "away": "only an out-of-office, still waiting (auto_reply_came: true)",
        "away_subject": "Automatická odpověď: jsem na horách",
        "away_body": "Do pondělí jsem mimo kancelář.",
        "due": "Reminder {label}: the pass brings it back in reminders_due; {overdue} overdue (awaiting_overdue).",
        "answer_subject": "Plán na svátky",
        "answer_body": "Přijedeme 24. odpoledne. Marie",
        "answered": 'The answer "{subject}" (new subject, In-Reply-To) ended the wait; the reminder reported, cleared.',
        "step7": "7) New mail in the conversation – the --follow watcher (Claude Code runs it with its Monitor tool)",
        "follow_started": "The watcher watches osobni from {since}; now a new message arrives.",
        "follow_subject": "Objednávka dřeva na chatu",
        "follow_body": "Dobrý den, dřevo přivezu v sobotu dopoledne. Petr",
        "follow_line": '"{subject}" delivered; {seconds} s later the watcher printed:',
        "follow_note": (
            "Monitor hands it to the assistant as an event. Neither subject nor sender is in it: what came,\n"
            "the assistant learns with a pass (mg_next_pass), while the watcher goes on watching."
        ),
        "follow_stopped": "Watcher stopped (SIGTERM, as when Claude Code ends) in {seconds} s.",
        "step8": "8) A meeting invitation – mg_get_message",
        "invite_subject": "Invitation: Planning the summer event",
        "invite_summary": "Planning the summer event",
        "invite_what": "“{summary}”, {day} {start}–{end} ({zone}), {location}",
        "invite_who": "Organizer {organizer}; this mailbox's answer: {answer}",
        "invite_note": (
            "The assistant answers (mg_respond_invitation) only when the user says so;\nthe tour does not answer."
        ),
        "done": "Done, the tour took {seconds} s.",
        "claude": "Try the server in Claude Code (sample mailboxes, no Google):",
        "readme": (
            "Set up real mailboxes as README.en.md describes (Configuration); "
            "the assistant's guide is docs/pro-asistenta.md."
        ),
        "failed": "error: the tour failed in step {step}: {reason}",
        "failed_start": "error: the tour failed: {reason}",
        "server_said": "The server wrote on stderr:",
        "tool_error": "tool {tool} returned an error: {text}",
        "unexpected": "unexpected result: {what}",
        "minutes": "{n} min ago",
        "hours": "{n} h ago",
        "days": "{n} days ago",
        "future": "scheduled",
        "repo_path": "<path to the repository>",
        "interrupted": "Tour interrupted.",
    },
}


# A word's forms for one, two to four, and five or more, in both languages side by side.
PLURALS: dict[str, dict[Lang, tuple[str, str, str]]] = {
    "thread": {"cs": ("vlákno", "vlákna", "vláken"), "en": ("thread", "threads", "threads")},
    "message": {"cs": ("zpráva", "zprávy", "zpráv"), "en": ("message", "messages", "messages")},
    "new": {
        "cs": ("novou zprávu", "nové zprávy", "nových zpráv"),
        "en": ("new message", "new messages", "new messages"),
    },
    "label": {
        "cs": ("třídicí štítek", "třídicí štítky", "třídicích štítků"),
        "en": ("classification label", "classification labels", "classification labels"),
    },
    "day": {"cs": ("den čekání", "dny čekání", "dní čekání"), "en": ("day waiting", "days waiting", "days waiting")},
}
