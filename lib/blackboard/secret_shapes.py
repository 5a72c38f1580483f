"""What secrets look like: the patterns ``redact`` applies (docs/adr/0016-secrets.md, 0023).

``TOKENS`` are secrets whole (``ghp_…``, key blocks, hashes, random runs); ``VALUES`` and
``NAMED_VALUES`` keep their surroundings readable (``password: [REDACTED]``), the latter run only on
lines holding one of ``SECRET_WORDS``. Each pattern comes with its marker, text every match holds in
lower case. A group ``s`` is the secret; a group ``r`` is one only when it looks random, a group ``t``
only when it is a random token (``redact.looks_random``).
"""

from __future__ import annotations

# A key block up to its END line (no run of four dashes comes before it); without one, its header and
# the key's own lines that follow (RFC 1421 headers, base64 rows): a broken block costs only itself.
PRIVATE_KEY_BLOCK = (
    r"(?i:-{4,5} ?BEGIN [A-Z0-9 _-]{0,40}?PRIVATE KEY(?: BLOCK)? ?-{4,5})"
    r"(?:(?:[^-]|-(?!---))*-{4,5} ?(?i:END)[^\n-]{0,60}-{4,5}"
    r"|(?:\r?\n(?:[A-Za-z0-9+/]+={0,2}\r?(?=\n|\Z)|[A-Za-z-]+: [^\n]*|(?=\r?\n[A-Za-z0-9+/]{20,})))*)"
)

# The base64 body of a private key without its BEGIN and END lines, by how its DER starts (PKCS#1 RSA,
# PKCS#8 plain and encrypted, SEC1 EC, Ed25519), an OpenSSH key body, and a PEM block base64-encoded once
# more (a Kubernetes secret's tls.key) unless it is a certificate's or a public key's; its further rows
# (a newline, or a JSON \\n, then base64) go with it.
KEY_BODY_ROWS = r"[A-Za-z0-9+/]*(?:(?:\\n|\r?\n[ \t]*)[A-Za-z0-9+/]{8,})*={0,2}"
KEY_BODIES = [
    ("mii", r"\bMII(?:[A-Za-z0-9+/]{3}IBA(?:DAN|AK)|[A-Za-z0-9+/]{2}DBOBgkqhkiG9w0BBQ)" + KEY_BODY_ROWS),
    ("mii", r"\bMII[A-Za-z0-9+/]{3}IBAz" + KEY_BODY_ROWS),  # PKCS#12 (version 3)
    ("lq", r"\blQ[A-Za-z0-9+/]{2}B[FGH][A-Za-z0-9+/]{20}" + KEY_BODY_ROWS),  # an OpenPGP secret key packet
    ("mig", r"\bMIG[A-Za-z0-9+/](?:AgEA|AgEB)[A-Za-z0-9+/]{20}" + KEY_BODY_ROWS),
    ("mc4caqaw", r"\bMC4CAQAw" + KEY_BODY_ROWS),
    ("mhccaqee", r"\bMHcCAQEE" + KEY_BODY_ROWS),
    ("b3blbnnzac1rzxktdje", r"\bb3BlbnNzaC1rZXktdjE" + KEY_BODY_ROWS),
    (
        "ls0tls1crudjti",
        r"\bLS0tLS1CRUdJTi(?!BDRVJUSUZJQ0FU|BQVUJMSUMg|BDRVJUSUZJQ0FURSBSRVFV|BQR1AgUFVCTElD)" + KEY_BODY_ROWS,
    ),
]

# A run of token characters that may be a secret of a vendor we have no rule for: ``_is_random_token``
# decides (a prefix and a separator then a random run of 20 or more, or a random run of 32 or more
# alone). A run starts and ends at a word's edge, never within a path, a URL, a file name or an email.
RANDOM_RUN = (
    r"(?<![\w+/.@:%~\\-])(?P<t>(?:[a-z][a-z0-9]{1,9}\.)?(?:[A-Za-z0-9+/_-]|%[0-9A-F]{2}){20,}={0,2})"
    r"(?![\w+/=@%~\\-]|\.\w)"
)

# (marker, pattern): the whole match is the secret.
TOKENS = [
    ("private key", PRIVATE_KEY_BLOCK),  # PEM, OpenSSH, PGP, SSH2; any case, four or five dashes
    ("private-lines", r"Private-Lines: \d+(?:\r?\n[A-Za-z0-9+/=]+)+"),  # PuTTY .ppk private part
    # Password hashes (/etc/shadow, htpasswd, LDAP, Django): crackable offline, so as good as the password.
    ("$", r"\$(?:1|apr1)\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}"),  # md5crypt, Apache MD5
    ("$", r"\$[56]\$(?:rounds=\d{1,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{43,86}"),  # sha256crypt, sha512crypt
    ("$", r"\$2[abxy]?\$\d\d\$[./0-9A-Za-z]{53}"),  # bcrypt
    ("$", r"\$g?y\$[./0-9A-Za-z]+\$[./0-9A-Za-z]+\$[./0-9A-Za-z]{43}"),  # yescrypt
    ("$argon2", r"\$argon2(?:id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+"),
    ("pbkdf2", r"\$?pbkdf2[_-]sha\d+\$\d+\$[A-Za-z0-9+/.=]+\$[A-Za-z0-9+/.=]{16,}"),  # passlib, Django
    ("}", r"\{(?i:ssha(?:256|512)?|sha(?:256|512)?|smd5|md5|crypt)\}[A-Za-z0-9+/=.$]{8,}"),  # LDAP userPassword
    # Hashes people paste from a dump: Kerberos tickets (Kerberoasting, AS-REP), SCRAM verifiers (Postgres,
    # MongoDB), MySQL's native and caching_sha2 hashes, Postgres md5, Oracle 11g, SQL Server, NetNTLMv2.
    ("$krb5", r"\$krb5(?:tgs|asrep|pa|tgt)\$\S{20,}"),
    # Any other hash in modular crypt form ($DCC2$, phpass $P$ and $H$, $sha1$…) and Django's (sha1$salt$…)
    ("$", r"(?<![\w$])\$[A-Za-z][\w-]{0,19}\$(?:[^\s$]{0,100}\$){0,4}[^\s$]{0,100}?[A-Za-z0-9./+=]{16,}"),
    ("$", r"(?<![\w$])(?:sha1|md5|sha256|crypt|unsalted_md5|unsalted_sha1)\$[^\s$]{0,64}\$[A-Za-z0-9./+=]{16,}"),
    ("scram-sha-", r"SCRAM-SHA-(?:1|256|512)\$\d+:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+"),
    ("*", r"(?<![\w*])\*[0-9A-F]{40}(?![0-9A-Za-z])"),
    ("$a$", r"\$A\$\d{3}\$\S{20,}"),
    ("md5", r"\bmd5[0-9a-f]{32}\b"),
    ("s:", r"\bS:[0-9A-F]{60}\b"),
    ("0x0", r"\b0x0[12]00[0-9A-Fa-f]{48,}\b"),
    ("::", r"\b[\w.-]{1,64}::[\w.-]{1,64}:[0-9a-fA-F]{16}:[0-9a-fA-F]{32}:[0-9a-fA-F]{32,}"),
    # Vendor tokens, as gitleaks' rules describe them.
    ("sk-ant-", r"\bsk-ant-[A-Za-z0-9_-]{16,}"),  # Anthropic
    # OpenAI and the keys shaped like it: a slug such as a branch `sk-learn-upgrade` is short,
    # or has no digit or capital; a key is long, or has them, or is 32 hex digits (DeepSeek).
    ("sk-", r"(?<![\w-])sk-(?:[A-Za-z0-9_-]{40,}|[a-f0-9]{32}(?![\w-])|(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,})"),
    ("gh", r"gh[pousr]_[A-Za-z0-9]{30,}"),  # GitHub personal, OAuth, app and refresh tokens
    ("github_pat_", r"\bgithub_pat_[A-Za-z0-9_]{40,}"),  # GitHub fine-grained token
    ("gl", r"gl(?:pat|rt|dt|ft|cbt|ptt|soat|oas|agent|imt|ffct)-[A-Za-z0-9_.-]{20,}"),  # GitLab tokens
    ("gr1348941", r"\bGR1348941[A-Za-z0-9_-]{20,}"),  # GitLab runner registration token
    ("npm_", r"\bnpm_[A-Za-z0-9]{36,}"),  # npm
    ("pypi-", r"\bpypi-AgE[A-Za-z0-9_-]{50,}"),  # PyPI upload token
    ("akia", r"\bAKIA[A-Z0-9]{16}\b"),  # AWS access key
    ("asia", r"\bASIA[A-Z0-9]{16}\b"),  # AWS temporary access key
    # Slack: digits first, unlike a name `xoxb-slack-bot`
    ("xox", r"\bxox[abposr]-(?:\d-)?[0-9]{6,}-[A-Za-z0-9-]{10,}"),
    ("xoxe", r"\bxoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{40,}"),  # Slack configuration and rotating refresh tokens
    ("xapp-", r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}"),  # Slack app-level token
    ("hooks.slack.com", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+"),
    ("discord", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}"),
    ("webhook.office.com", r"https://[\w-]+\.webhook\.office\.com/webhookb2/[\w@/-]{40,}"),  # Teams webhook
    ("k_", r"\b[srp]k_(?:live|test)_[A-Za-z0-9]{16,}"),  # Stripe
    ("whsec_", r"\bwhsec_[A-Za-z0-9]{20,}"),  # Stripe webhook secret
    ("aiza", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),  # Google API key (not \b: it may end in '-')
    ("ya29.", r"\bya29\.[A-Za-z0-9_-]{30,}"),  # Google OAuth access token
    ("gocspx-", r"\bGOCSPX-[A-Za-z0-9_-]{28}"),  # Google OAuth client secret
    ("1//0", r"\b1//0[A-Za-z0-9_-]{40,}"),  # Google OAuth refresh token
    ("hf_", r"\bhf_[A-Za-z0-9]{30,}"),  # Hugging Face
    ("api_org_", r"\bapi_org_[A-Za-z0-9]{30,}"),  # Hugging Face organisation
    ("sg.", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),  # SendGrid
    ("_v1_", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),  # DigitalOcean
    ("bearer", r"\b(?i:bearer)[ \t]+[A-Za-z0-9._~+/=-]{16,}"),  # any issuer's Bearer token
    ("eyj", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),  # a JWT, even without Bearer
    ("eyjrijoi", r"\beyJrIjoi[A-Za-z0-9]{50,}={0,3}"),  # Grafana API key
    ("hv", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}"),  # HashiCorp Vault service, batch and recovery tokens
    ("atlasv1", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),  # Terraform Cloud
    ("dapi", r"\bdapi[a-f0-9]{32}(?:-\d)?"),  # Databricks
    # Doppler: CLI, personal, service (which may name its config: dp.st.prd.KEY), service account, SCIM, audit
    ("dp.", r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?:[A-Za-z0-9_-]{1,64}\.)?[A-Za-z0-9]{40,}"),
    ("shp", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),  # Shopify
    ("lin_api_", r"\blin_api_[A-Za-z0-9]{40}"),  # Linear
    ("age-secret-key-1", r"\b(?i:AGE-SECRET-KEY-1)[0-9A-Za-z]{58}"),  # age identity (Bech32: either case)
    ("pmak-", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"),  # Postman
    ("glsa_", r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),  # Grafana service account
    ("glc_", r"\bglc_[A-Za-z0-9+/]{32,}={0,3}"),  # Grafana Cloud
    ("pscale_", r"\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9_.=-]{32,}"),  # PlanetScale
    ("nr", r"NR(?:AK|II|JS)-[A-Za-z0-9-]{19,}"),  # New Relic user, insert and browser keys
    ("atatt3", r"\bATATT3[A-Za-z0-9_=-]{150,}"),  # Atlassian API token
    ("atbb", r"\bATBB[A-Za-z0-9]{28,}"),  # Bitbucket app password
    ("akcp", r"\bAKCp[A-Za-z0-9]{69}"),  # JFrog Artifactory
    ("ops_eyj", r"\bops_eyJ[A-Za-z0-9+/]{100,}={0,3}"),  # 1Password service account
    # 1Password account secret key
    ("a3-", r"\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b"),
    ("pul-", r"\bpul-[a-f0-9]{40}"),  # Pulumi
    ("pnu_", r"\bpnu_[A-Za-z0-9]{36}"),  # Prefect
    ("rdme_", r"\brdme_[a-z0-9]{70}"),  # ReadMe
    ("rubygems_", r"\brubygems_[a-f0-9]{48}"),  # RubyGems
    ("sntry", r"\bsntry[su]_[A-Za-z0-9+/=_]{60,}"),  # Sentry organisation and user tokens
    ("ntn_", r"\bntn_[0-9]{11}[A-Za-z0-9]{35}"),  # Notion
    ("hrku-", r"\bHRKU-AA[A-Za-z0-9_-]{58}"),  # Heroku
    ("fm2_", r"\bfm2_[A-Za-z0-9+/]{100,}={0,3}"),  # Fly.io macaroon
    ("sk", r"\bSK[0-9a-fA-F]{32}\b"),  # Twilio API key
    ("pplx-", r"\bpplx-[A-Za-z0-9]{48}"),  # Perplexity
    ("gsk_", r"\bgsk_[A-Za-z0-9]{52}"),  # Groq
    ("r8_", r"\br8_[A-Za-z0-9]{37}"),  # Replicate
    ("xai-", r"\bxai-[A-Za-z0-9]{80}"),  # xAI
    ("xkeysib-", r"\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),  # Brevo (Sendinblue)
    ("sq0", r"\bsq0(?:atp|csp)-[A-Za-z0-9_-]{22,}"),  # Square
    ("eaa", r"\bEAA[A-Za-z0-9]{60,}"),  # Meta (Facebook) and Square access tokens
    ("dt0c01.", r"\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),  # Dynatrace
    ("ez", r"EZ[AT]K[A-Za-z0-9]{54}"),  # EasyPost
    ("dckr_pat_", r"\bdckr_pat_[A-Za-z0-9_-]{27,}"),  # Docker Hub
    ("sbp_", r"\bsbp_[a-f0-9]{40}"),  # Supabase
    ("ltai", r"\bLTAI[A-Za-z0-9]{20}"),  # Alibaba Cloud
    ("lsv2_", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),  # LangSmith
    ("tskey-", r"\btskey-[a-z]+-[A-Za-z0-9-]{20,}"),  # Tailscale
    ("clojars_", r"\bCLOJARS_[a-z0-9]{60}"),  # Clojars
    ("q~", r"(?<![\w~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}"),  # Azure AD client secret
    ("sk.eyj", r"\bsk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}"),  # Mapbox secret token
    (":aa", r"\b\d{8,10}:AA[A-Za-z0-9_-]{33}(?![\w-])"),  # Telegram bot
    ("key-", r"\bkey-[a-f0-9]{32}\b"),  # Mailgun
    ("sl.", r"\bsl\.[A-Za-z0-9_.=-]{130,}"),  # Dropbox short-lived token
    ("a" * 22, r"\bA{22}[A-Za-z0-9%]{80,}"),  # Twitter (X) bearer token
    # Discord bot token: the bot's id in base64 (its digits make every fourth character M, N or O), a
    # timestamp, an HMAC. Its marker is in most text: it starts with a character set, which is searched
    # for fast, and looks behind it after.
    (
        ".",
        r"[MNO](?<![\w-].)[A-Za-z0-9_-]{3}(?:[MNO][A-Za-z0-9_-]{3}){4}[MNO][A-Za-z0-9_-]{2,6}"
        r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![\w-])",
    ),
    ("-us", r"\b[0-9a-f]{32}-us\d{1,2}\b"),  # Mailchimp (the data centre ends it)
    (":apa91b", r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),  # Firebase Cloud Messaging legacy server key
    ("pat", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"),  # Airtable personal access token
    ("figd_", r"\bfigd_[A-Za-z0-9_-]{32,}"),  # Figma personal access token
    ("nfp_", r"\bnfp_[A-Za-z0-9]{30,}"),  # Netlify personal access token
    ("secret_", r"\bsecret_[A-Za-z0-9]{43}(?![\w-])"),  # Notion integration token (before ntn_)
    ("s.", r"(?<![\w./-])s\.[A-Za-z0-9]{24}(?![\w.-])"),  # HashiCorp Vault service token before 1.10
    ("rnd_", r"\brnd_[A-Za-z0-9]{32,}"),  # Render API key
    ("fw_", r"\bfw_[A-Za-z0-9]{20,}"),  # Fireworks AI API key
    ("oauth:", r"\boauth:[a-z0-9]{30}\b"),  # Twitch chat (IRC) password
    *KEY_BODIES,
    ("", RANDOM_RUN),  # last: a vendor's own rule names what it matched first
]

# The end of a name whose last word says it holds a secret, in any case or style: password, DB_PASS,
# Pwd, client_secret, GITHUB_TOKEN, apiKey, SecretAccessKey, SECRET_KEY_BASE, client-key-data,
# private_key_id, SMTP_CREDS; a pass or pwd joined to the word before it in camel case or capitals
# (keystorePass, adminPwd, DBPASS, PGPASS) or after a word that says whose it is (rootpw, bindpw,
# dbpass); not PASSWORD_MIN_LENGTH, max_tokens, secretName, token_url, bypass, compass, primary_key.
SECRET_NAME_END = (
    r"(?:(?i:password|passwd|passphrase|passcode|secret|token|credentials?|creds|private[_.-]?key[_.-]?id"
    r"|(?:api|access|secret|private|auth|account|master|encryption|signing|hmac|jwt|client|consumer|app"
    r"|service|subscription|license|storage|shared|session|admin|tls|ssh)[_.-]?key)|(?<![A-Za-z])(?i:pass|pwd)"
    r"|(?<=[a-z0-9])P(?:ass|wd)|(?<=[A-Z0-9])(?:PASS|PWD)|(?<=[_.-])(?i:pw)|(?<![A-Za-z])(?i:psk)"
    r"|(?<![A-Za-z])(?i:db|root|bind|admin|user|store|key|trust|ssh|pg|smtp|mail|ldap|sql|proxy|ftp|vnc|wifi)"
    r"(?:pass|pwd|pw))"
    r"(?:[_.-]?(?i:base|b64|base64|json|value|data))?"
)
SECRET_NAME = r"[\w.-]{0,80}?" + SECRET_NAME_END
KEY = r"(?<![\w.-])" + SECRET_NAME
# A reference to where a secret lives, kept so a note stays useful: ${DB_PASSWORD}, $(cat pw), $TOKEN,
# $env:TOKEN, {{ .Values.password }}, %(pw)s, %PW%, <your-token>; or what redaction already put there.
REFERENCE = r"\[REDACTED\]|\$[{(]|[{<]|%\(|%\w+%|\$(?i:env):\w+|\$\w+(?![^\s\"',;&)\]}])"
CODE_END = r"(?![^\s\"',;:&)\]}])"  # where an expression of code ends: a space, a quote, a colon, a bracket
# Where a value of several words ends, or goes on as code: `None  # later`, `token or default`.
PHRASE_END = r"(?=[ \t]*(?:[\r\n#\"',;)\]}]|\Z|(?:or|and|if|else|is|in|not)\b|\|\||&&|\?\?))"


def _not_a_value(word_end: str) -> str:
    """Where a value would stand, something that is not one: a reference, a literal or a type (true,
    None, str), a path or a URL (/run/secrets/db, ~/.ssh/id_rsa, https://…; a URL's own credentials have
    their patterns), or code (get_token(), os.environ["X"], tmp_path / "x", api_key=api_key, and
    attributes: self.token, settings.DB_PASSWORD, Config.API_KEY, which a lower-case first name without
    a digit or a last name naming a secret tells from a password such as Spring.Sale2024). A literal or
    a name is one when ``word_end`` follows it: "keyboard cat" is a passphrase, not the name keyboard.
    A mask (``********``, ``xxxx``), an expression (``await auth.getAccessToken()``, ``new ApiKey(c)``)
    and a YAML tag (Ansible's ``!vault |``, CloudFormation's ``!Ref``) are no value either.
    No value starts with a blank: that fails first and fast when a run of blanks is given back one by one.
    """
    return (
        r"(?![ \t])(?![\"']?(?:" + REFERENCE + r"|(?:~|\.\.?)?/|[A-Za-z][\w+.-]*://"
        r"|(?:\*{3,}|x{4,}|X{4,}|\u2022{3,}|\.{3,}|\u2026)[\"']?" + CODE_END + ""
        r"|(?:await|new|yield|typeof|lambda|async)[ \t]|![A-Za-z][\w!./-]*(?:[ \t]|$)"
        r"|(?i:true|false|null|none|nil|undefined|required|optional|str|string|bytes|secretstr)(?![\w.-])"
        + word_end
        + r"|[\w.]+[(\[]|[A-Za-z_][\w.]*[ \t]+[-+*/%|&^][ \t]"
        r"|[a-z_][A-Za-z_]*(?:\.[A-Za-z_]+)+"
        + CODE_END
        + r"|(?:[A-Za-z_]\w*\.)+\w*(?i:pass|pwd|secret|token|key|credential)\w*"
        + CODE_END
        + r"|[A-Za-z_]*(?i:pass|pwd|secret|token|key|credential)[A-Za-z_]*"
        + word_end
        + r"))"
    )


NOT_A_VALUE = _not_a_value(CODE_END)
NOT_A_PHRASE = _not_a_value(PHRASE_END)
# A quoted value keeps its quotes ("[REDACTED]"); one that starts with a comma is the gap between
# two strings of code ("pass:", "…"), not a value.
QUOTED = r"\"(?![,;)])(?:[^\"\\\n]|\\.)+\"|'(?![,;)])[^'\n]+'"
VALUE_CHAR = r"[^\s\"'`,;&<>(){}\[\]]"
# The secret, group ``s``: a value that is not one of the above, quoted or three characters or more.
SECRET = NOT_A_VALUE + r"(?P<s>" + QUOTED + "|" + VALUE_CHAR + "{3,})"
# After `name = ` (INI, TOML, properties, Python) a value may be words: "correct horse battery staple",
# up to the line's end or a comment; three characters at least, "my long pass phrase" too.
WORD = VALUE_CHAR + "+"
MORE_WORDS = r"(?:[ \t]+(?!#)" + WORD + ")"
WORDS = "(?:" + VALUE_CHAR + "{3,}" + MORE_WORDS + "*|" + WORD + MORE_WORDS + "+)"
# An assignment: INI, TOML, properties and code put blanks around `=` (group `blank`), and the value
# may be words; .env, shell, connection strings and --flag=value put none, and a value is one word;
# `:=`, `=>` and `==` take one word too. One pattern, so that a name is looked for once.
ASSIGNMENT = (
    r"[\"']?" + KEY + r"[\"']?(?:(?P<blank>[ \t]+=[ \t]*|=[ \t]+)(?![=>])|[ \t]*(?:=>|:=|\?=|[!=]?==?)[ \t]*)"
    r"(?(blank)"
    + NOT_A_PHRASE
    + "|"
    + NOT_A_VALUE
    + r")(?P<s>"
    + QUOTED
    + r"|(?(blank)"
    + WORDS
    + "|"
    + VALUE_CHAR
    + "{3,}))"
)
# In YAML a plain value runs to the line's end: "passphrase: correct horse battery staple".
SECRET_TO_LINE_END = NOT_A_PHRASE + r"(?P<s>" + QUOTED + "|" + VALUE_CHAR + r"[^\r\n\"'`,;<>(){}\[\]]{2,})"
# In prose a colon is not an assignment ("the secret: keep tests small"): a value there is quoted,
# or holds a letter and a digit within its first 64 characters.
SECRET_LOOKING = "(?=" + VALUE_CHAR + r"{0,63}?\d)(?=" + VALUE_CHAR + "{0,63}?[A-Za-z])" + VALUE_CHAR + "{6,}"
SECRET_IN_PROSE = NOT_A_VALUE + r"(?P<s>" + QUOTED + "|" + SECRET_LOOKING + ")"
# A header's value runs to the line's end or a quote; quoted parameters (Digest's) are part of it.
# A header value is never code, so only references are kept.
HEADER_SECRET = r"(?![ \t])(?![\"']?(?:" + REFERENCE + r"))(?P<s>[^\s\"'](?:[^\r\n\"']|\"[^\"\r\n]*\"(?=[,\s]|$))+)"
HEADER_SEPARATOR = r"[\"']?[ \t]*:[ \t]*[\"']?"
AUTH_SCHEME = r"(?i:basic|bearer|token|digest|negotiate|ntlm|apikey|api-key|key|ssws|bot|sharedkey|aws4-hmac-sha256)"
SCHEME = r"(?:" + AUTH_SCHEME + r"[ \t]+|(?!" + AUTH_SCHEME + r"[ \t]))"  # an Authorization scheme, if any, stays


def _up_to(flag: str) -> str:
    """A command's next words (at most 20) up to its first ``flag``: ``docker login -u me -p SECRET``."""
    return r"(?:[ \t]+(?!" + flag + r")[^\s|;&]+){0,20}[ \t]+" + flag


def _flag_holds(letter: str) -> str:
    """Within a command's first six flags, one that holds ``letter``: ``-b`` in ``htpasswd -B -C 10 -b``."""
    return r"(?:[ \t]+-[A-Za-z0-9]{1,9}(?:[ \t]+\d{1,9})?){0,5}[ \t]+-[A-Za-z0-9]{0,8}" + letter


# htpasswd's flags: letters or digits, a number after -C and -r; -b takes the password from the command
# line, and with -n no file comes before the user.
HTPASSWD = (
    r"htpasswd(?=" + _flag_holds("b") + r")(?P<n>(?=" + _flag_holds("n") + r"))?"
    r"(?:[ \t]+-[A-Za-z0-9]{1,9}(?:[ \t]+\d{1,9})?){1,6}(?(n)|[ \t]+[^\s-]\S{0,4095})[ \t]+[^\s-]\S{0,4095}[ \t]+"
)
# A name in one field and its value in the next: Kubernetes, Compose and Helm env lists (- name: X /
# value: …), ECS and CloudFormation (Name:/Value:), HCL ({ name = "X", value = "…" }), helm --set
# env[0].name=X,env[0].value=….
VALUE_THEN_NAME = (
    r"(?<![A-Za-z])(?i:value)[\"']?[ \t]*[:=][ \t]*(?P<s>\"[^\"\n]{1,512}\"|'[^'\n]{1,512}')"
    r"[ \t]*,[ \t]*(?:\r?\n[ \t]*)?"
    r"[\"']?(?i:name)[\"']?[ \t]*[:=][ \t]*[\"']" + SECRET_NAME + r"[\"']"
)
# CloudFormation and AWS CLI: ParameterKey=DbPassword,ParameterValue=…
PARAMETER_KEY_VALUE = (
    r"(?i:parameterkey)[\"']?[ \t]*[:=][ \t]*[\"']?" + SECRET_NAME + r"[\"']?[ \t]*,[ \t]*(?:\r?\n[ \t]*)?"
    r"[\"']?(?i:parametervalue)[\"']?[ \t]*[:=][ \t]*" + SECRET
)
NAME_THEN_VALUE = (
    r"(?<![A-Za-z])(?i:name)[\"']?[ \t]*[:=][ \t]*[\"']?" + SECRET_NAME + r"[\"']?[ \t]*,?[ \t]*(?:\r?\n[ \t]*)?"
    r"(?:[\w\[\]]{1,40}\.)?[\"']?(?i:value)[\"']?[ \t]*[:=][ \t]*" + SECRET_TO_LINE_END
)
# A record of a name and a value whatever the name, when the value looks random: a cookie as Selenium,
# Playwright and browser exports write it ({"name": "wordpress_logged_in_…", "value": "…"}).
NAME_THEN_RANDOM_VALUE = (
    r"(?<![A-Za-z])(?i:name)[\"']?[ \t]*[:=][ \t]*[\"'][^\"'\n]{1,100}[\"'][ \t]*,[ \t]*(?:\r?\n[ \t]*)?"
    r"[\"']?(?i:value)[\"']?[ \t]*[:=][ \t]*(?P<r>\"[^\"\n]{16,512}\"|'[^'\n]{16,512}')"
)
# pgbouncer's userlist.txt: "user" "password" (plain, md5… or SCRAM-SHA-256$…).
USERLIST = r"(?m)^\"[^\"\n]{1,64}\"[ \t]+\"(?P<s>[^\"\n]{1,512})\"[ \t]*\r?$"
# What echo hands to sudo -S: a quoted or plain word (a pipe ends it), not a reference such as "$PW".
PIPED_SECRET = r"(?![\"']?(?:" + REFERENCE + r"))(?P<s>" + QUOTED + r"|[^\s|;&\"'`]{3,})"
# Terraform: variable "db_password" { …; default = "…" }: default right after the brace, or starting one
# of the block's next eight lines (a line starting with } ends the block).
TERRAFORM_DEFAULT = (
    r"variable[ \t]+\"" + SECRET_NAME + r"\"[ \t]*\{(?:[^\n]{0,300}\n(?![ \t]*(?:\}|variable\b))){0,8}"
    r"[ \t]*default[ \t]*=[ \t]*" + SECRET
)


# A word a person typed as a password: 5 to 64 characters with a letter and a digit or a symbol, not
# ending in a full stop, a comma or an exclamation mark (that ends the sentence). Prose about passwords has none:
# "the password is stored in the vault", "is 12 characters long".
TYPED_SECRET = (
    r"(?!" + REFERENCE + r"|[A-Za-z][\w+.-]*://|~?/|\.\.?/)"
    r"(?=[^\s\"'`]{0,63}[0-9@#$%^&*~+=])(?=[^\s\"'`]{0,63}[A-Za-z])[^\s\"'`(){}\[\]<>]{4,63}[^\s\"'`.,;:(){}\[\]<>]"
    r"(?=[.,;:)!?]*(?:\s|$))"
)
# Not a reference or a mask ("{{ .Values.password }}", "$PW", "********"): the rest of NOT_A_VALUE is
# code, which a typed secret's digit or symbol already tells apart, and would cost every pattern using
# it a larger compile.
TYPED = r"(?![\"'`]?(?:" + REFERENCE + r"|\*{3,}))(?P<s>" + QUOTED + r"|`[^`\n]{1,200}`|" + TYPED_SECRET + ")"
# A name in one place and its value in another, in XML: Hadoop's <name>…</name><value>…</value>, Spring's
# <property name="…">…</property> or value="…", .resx <data name="…"><value>…</value>, <entry key="…">.
XML_NAME = r"[\"'][ \t]*" + SECRET_NAME + r"[ \t]*[\"']"
XML_APART = [
    ("<name>", r"<name>[ \t]*" + SECRET_NAME + r"[ \t]*</name>\s{0,200}<value>(?P<s>[^<\n]{1,4096})</value>"),
    ("=", r"(?<![\w-])(?:name|key)=" + XML_NAME + r"[^<>\n]{0,200}?\bvalue=[\"'](?P<s>[^\"'\n]{1,4096})[\"']"),
    (
        "=",
        r"(?<![\w-])(?:name|key)=" + XML_NAME + r"(?:[ \t]+[\w:.-]+=[\"'][^\"'<>\n]{0,200}[\"']){0,4}[ \t]*>"
        r"\s{0,200}(?:<value>)?(?P<s>[^<\s][^<\n]{0,4095})<",
    ),
]
# A database login on a command line: sqlplus, rman, expdp… scott/tiger@orcl; any user/password@host:port/service.
ORACLE_LOGIN = (
    r"\b(?i:sqlplus|rman|expdp|impdp|exp|imp|sqlldr|dgmgrl|sql|conn(?:ect)?)(?:[ \t]+-{1,2}\w+){0,4}[ \t]+[\"']?"
    r"[\w$#.]{1,30}/(?P<s>[^\s/@\"']{1,64})@"
)
EASY_CONNECT = r"(?<![\w/.@-])[A-Za-z_][\w$#.]{0,30}/(?P<s>[^\s/@\"':]{1,64})@(?://)?[\w.-]+:\d{2,5}[/:]\w"
# user:password@host without a scheme (impacket's DOMAIN/user:password@host, rsync, proxies): the password
# holds something besides letters, so mailto:alice@example.com is no login.
BARE_LOGIN = (
    r"(?<![\w:.@%+-])[\w.\\-]{1,64}:(?P<s>(?=[^\s:@/\"']{0,127}[^A-Za-z\s:@/\"'])[^\s:@/\"']{1,128})"
    r"@(?=[\w-]+(?:\.[\w-]+)+|\[?\d)"
)
# A password flag after a user flag: tool -u admin -P …, ipmitool -U admin -P …, crackmapexec -u x -p '…';
# a port (-p 5432), a database name (mysql -u root -p app) or the next flag is not one.
USER_THEN_PASSWORD = (
    r"(?<![\w-])-[uU][ \t]*[\"']?[\w.@\\$-]{1,64}[\"']?(?:[ \t]+[^\s|;&]+){0,8}?[ \t]+-[pP](?:[ \t]+|(?=[\"']))(?!-)"
    + TYPED
)
# lftp -u user,password; a note's "u: deploy p: …"
USER_COMMA_PASSWORD = r"(?<![\w-])-u[ \t]+[\"']?[\w.@\\-]{1,64},(?P<s>" + QUOTED + r"|[^\s\"',]{3,128})"
U_THEN_P = r"(?<![\w-])(?i:u|user):[ \t]*\S{1,64}[ \t,]+(?i:p):[ \t]*" + TYPED
# Remote desktop: xfreerdp /u:admin /p:…
RDP_LOGIN = (
    r"(?i:/u(?:ser)?:)[^\s/]{1,128}(?:[ \t]+\S{1,256}){0,8}?[ \t]+(?i:/p(?:assword)?:)(?P<s>" + QUOTED + r"|[^\s\"']+)"
)
# Prose: "log in as ops with …", "login as root using password …".
LOGIN_AS = (
    r"(?i:log(?:ged)?[ -]?in|sign(?:ed)?[ -]?in)[ \t]+as[ \t]+[\"'`]?[\w.@\\-]{1,64}[\"'`]?"
    r"(?:[ \t]*,)?[ \t]+(?i:with|using|and)[ \t]+"
    r"(?:(?i:the[ \t]+)?(?i:password|passphrase|pass|pw|pwd)[ \t]+(?i:is[ \t]+)?)?" + TYPED
)
# A user and a password with a spaced slash, as notes write them: "OfficeNet / …", "alice@acme.io / …".
SPACED_PAIR = r"(?<![\w/])[\w.@-]{1,64}[ \t]+/[ \t]+" + TYPED
# A hashcat potfile line: the hash, a colon, the cracked password; both go.
POTFILE = r"(?m)^(?P<s>[0-9a-fA-F]{32,128}:[^\s:][^\n]{0,200})$"
# Password-hash dumps: pwdump and secretsdump lines (user:rid:LM:NT:::).
PWDUMP = r"(?m)^[^\s:]{1,256}:\d{1,10}:(?P<s>[0-9a-fA-F]{32}:[0-9a-fA-F]{32}):::"

# (marker, pattern): each has a group ``s``, the secret; the rest of the match stays.
VALUES = [
    *XML_APART,
    ("@", ORACLE_LOGIN),
    ("@", EASY_CONNECT),
    ("@", BARE_LOGIN),
    ("-u", USER_THEN_PASSWORD),
    ("-u", USER_COMMA_PASSWORD),
    ("p:", U_THEN_P),
    (" / ", SPACED_PAIR),
    ("/u", RDP_LOGIN),
    ("in as ", LOGIN_AS),
    (":::", PWDUMP),
    (":", POTFILE),
    # URLs: user:password@ (the password may hold '@', '/' or '#'; a port then a path is not one),
    # a user part that long is a token (GitHub and Azure DevOps PATs), the query's credentials.
    ("://", r"://[^\s/?#@:]*:(?!\d*(?:[/?#\s]|$))(?P<s>(?:[^\s?'\"<>:]|:(?!//))+)@"),
    ("://", r"://(?P<s>[A-Za-z0-9_.~+%-]{20,})@"),
    (
        "=",
        r"[?&](?i:key|sig|signature|x-amz-signature|x-amz-credential|x-goog-signature|x-goog-credential)"
        r"=(?P<s>[^&\s#\"'<>]{8,})",
    ),
    # Command lines: curl -u user:pass (not docker's -u 1000:1000), and the tools taking a password as an option.
    # A user name has a bound: unbounded, each `-u` of `-ua-ua-ua…` would scan to the end (quadratic).
    ("-u", r"(?:--user|-u)[ \t=]?[\"']?[^\s:\"'$-][^\s:\"'$]{0,255}:(?!\d+(?![^\s\"']))" + SECRET),
    (
        " login",
        r"\b(?:docker|podman|nerdctl|buildah|skopeo|oras|helm registry|az|oc|cf) login"
        + _up_to("-p")
        + r"[ \t]*"
        + SECRET,
    ),
    ("mysql", r"mysql(?:dump|admin)?" + _up_to("-p") + r"(?P<s>[^\s-]\S*)"),  # -pSECRET; -p DATABASE prompts
    ("redis-cli", r"redis-cli" + _up_to("-a") + r"[ \t]+" + SECRET),
    ("mongo", r"\bmongo(?:sh|dump|restore|export|import|stat|top|files)?" + _up_to("-p") + r"[ \t]+(?!-)" + SECRET),
    (
        "ldap",
        r"\bldap(?:search|add|modify|delete|passwd|compare|whoami|modrdn|exop)"
        + _up_to("-w")
        + r"[ \t]+(?!-)"
        + SECRET,
    ),
    ("ldappasswd", r"\bldappasswd" + _up_to("-[as]") + r"[ \t]+(?!-)" + SECRET),  # -a OLD, -s NEW
    ("-p", r"\b(?:sqlcmd|bcp|osql)" + _up_to("-P") + r"[ \t]*(?!-)" + SECRET),  # SQL Server
    # Samba: -U user%password, --user=DOMAIN\user%password
    (
        "%",
        r"\b(?:smbclient|smbget|smbcacls|smbmap|smbtree|rpcclient|net|mount\.cifs|winexe)"
        + _up_to("(?:-U|--user)")
        + r"(?:name)?(?:=|[ \t]*)[\"']?[^\s%\"'|;&]{1,256}%(?P<s>[^\s\"'|;&]+)",
    ),
    ("zip", r"\b(?:un)?zip" + _up_to("-P") + r"[ \t]+(?!-)" + SECRET),  # zip -P SECRET; -e prompts
    ("7z", r"\b7z[arz]?" + _up_to("-p") + NOT_A_VALUE + r"(?P<s>" + QUOTED + r"|[^\s\"'-]\S*)"),  # -pSECRET; -p prompts
    ("openssl", r"\bopenssl" + _up_to("-k") + r"[ \t]+(?!-)" + SECRET),  # openssl enc -k SECRET
    # echo SECRET | sudo -S …, sudo -S … <<< SECRET
    (
        "sudo",
        r"\b(?:echo|printf)(?:[ \t]+-[A-Za-z]{1,3})?(?:[ \t]+[\"']%s\\n[\"'])?[ \t]+"
        + PIPED_SECRET
        + r"[ \t]*\|[ \t]*sudo(?:[ \t]+(?!-[A-Za-z]*S)[^\s|;&]+){0,4}[ \t]+(?:-[A-Za-z]*S|--stdin)\b",
    ),
    ("sudo", r"\bsudo[ \t]+(?:-[A-Za-z]*S|--stdin)\b[^\n|;&<]{0,200}<<<[ \t]*" + SECRET),
    # Windows: net user NAME SECRET (/add), net use \\HOST\SHARE SECRET /user:NAME; * prompts
    ("net use", r"\b(?i:net user)[ \t]+(?:\"[^\"\n]+\"|[^\s/\"]\S*)[ \t]+(?![/*])" + SECRET),
    ("net use", r"\b(?i:net use)[ \t]+(?:[A-Za-z]:[ \t]+|\*[ \t]+)?\\\\\S+[ \t]+(?![/*])" + SECRET),
    ("convertto-securestring", r"(?i:convertto-securestring)(?:[ \t]+-(?i:string))?[ \t]+(?!-)" + SECRET),  # PowerShell
    (
        "rabbitmqctl",
        r"\brabbitmqctl(?:[ \t]+-{1,2}[\w-]+(?:[ \t]+[^\s-]\S*)?){0,4}"
        r"[ \t]+(?:add_user|change_password|authenticate_user)[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\S+)[ \t]+(?!-)" + SECRET,
    ),
    # aws configure set NAME SECRET, npm/yarn/pnpm config set //registry/:_authToken SECRET
    (
        "config",
        r"\b(?:aws[ \t]+configure|(?:npm|yarn|pnpm)[ \t]+config)[ \t]+set(?:[ \t]+--?[\w-]+(?:[ \t]+[^\s-]\S*)?){0,3}?"
        r"[ \t]+[\"']?[^\s=\"']{0,160}?(?:" + SECRET_NAME_END + r"|_auth)[\"']?[ \t]+" + SECRET,
    ),
    ("secret set", r"\bgh[ \t]+secret[ \t]+set" + _up_to(r"(?:--body|-b)(?![\w-])") + r"[ \t]*=?[ \t]*" + SECRET),
    # IMAP: TAG LOGIN USER SECRET (a one-letter tag only with LOGIN in capitals, as a log writes it)
    (
        "login",
        r"(?m)^[ \t]*(?:(?:[A-Za-z]{0,4}\d{1,6}|\.)[ \t]+(?i:login)|[A-Za-z][ \t]+LOGIN)[ \t]+(?:\"[^\"\n]*\"|[^\s\"]+)"
        r"[ \t]+(?P<s>\"(?:[^\"\\\n]|\\.)*\"|[^\s\"]+)[ \t]*\r?$",
    ),
    # SMTP: AUTH PLAIN base64(\0user\0password), and AUTH LOGIN's answer to 334 base64("Password:")
    ("auth", r"\bAUTH[ \t]+(?:PLAIN|XOAUTH2|OAUTHBEARER)[ \t]+(?P<s>[A-Za-z0-9+/]{8,}={0,2})"),
    (
        "ugfzc3dvcmq6",
        r"\b334[ \t]+UGFzc3dvcmQ6[ \t]*\r?\n[ \t]*(?:[<>~*-]{1,3}|[CS]:)?[ \t]*(?P<s>[A-Za-z0-9+/]{4,}={0,2})",
    ),
    ("htpasswd", HTPASSWD + SECRET),  # htpasswd -b FILE USER SECRET, htpasswd -nb USER SECRET
    # Machine-written: an env var named *_PAT (AZURE_DEVOPS_EXT_PAT), Firebase's ?auth=, a pull secret
    ("_pat", r"(?<=[A-Za-z0-9])_(?i:pat)[\"']?[ \t]*[:=][ \t]*" + SECRET),
    ("auth=", r"[?&]auth=(?P<s>[^&\s#\"'<>]{20,})"),
    ("dockerc", r"\.docker(?:configjson|cfg)[\"']?[ \t]*:[ \t]*[\"']?(?P<s>[A-Za-z0-9+/]{16,}={0,2})"),
    ("value", NAME_THEN_VALUE),
    ("value", NAME_THEN_RANDOM_VALUE),
    ('" "', USERLIST),
    ("parametervalue", PARAMETER_KEY_VALUE),
    ("default", TERRAFORM_DEFAULT),
    ("identified", r"(?i:identified\s+by(?:\s+password)?)\s+" + SECRET),  # SQL: CREATE USER … IDENTIFIED BY 'x'
    # .netrc: machine HOST login USER password SECRET, on one line or several. An entry names each of
    # login, account and port once: unbounded, `default port default port …` is scanned from each start.
    ("password", r"(?:machine\s+\S+|default)(?:\s+(?:login|account|port)\s+\S+){0,3}\s+password\s+(?P<s>\S+)"),
    (":", r"(?m)^[^:\s]+:(?:[0-9]+|\*):[^:\s]+:[^:\s]+:(?P<s>\S+)$"),  # .pgpass: host:port:database:user:password
]

# Every match of a NAMED_VALUES pattern is on one line and holds one of these words (in lower case).
# The patterns run only on such lines (and the runs they make): a name may start at any word, and
# trying each is slow.
# A session is named on most lines of a handoff, so only the forms a cookie or a setting give it count.
SECRET_WORDS = (
    *(
        "pass",
        "pwd",
        "pw",
        "psk",
        "secret",
        "token",
        "cred",
        "key",
        "auth",
        "cookie",
        "signature",
        "jwt",
        "hmac",
        "dsn",
    ),
    *("sessionid", "sessid", "session=", 'session"', "session':", "session =", "session:", "sid=", 'sid"', "sid:"),
    *("contrase", "senha", "wachtwoord", "kennwort", "parola", "l\u00f6senord", "salasana", "has\u0142o"),
)
# A name that may hold a secret or something else (a key, a session, a cookie, a signature, a DSN): its
# value, group ``r``, goes only when it ``looks_random``. ``key: value``, ``session_id: s1`` and
# ``auth: true`` stay; ``session = 9fQ2…``, ``JSESSIONID=…``, ``document.cookie = "sid=…"`` go.
WEAK_NAME = r"[\w.-]{0,80}?(?i:key|auth|cookie|session|sess(?:ion)?[_-]?id|sid|signature|jwt|dsn|hmac|cred)"
WEAK_VALUE = r"(?![ \t])(?P<r>\"[^\"\n]{16,512}\"|'[^'\n]{16,512}'|[^\s\"'`,;&<>(){}\[\]]{16,})"
WEAK_ASSIGNMENT = r"(?<![\w.-])" + WEAK_NAME + r"[\"']?[ \t]*(?:=>|:=|[:=])[ \t]*" + WEAK_VALUE
# A setter or builder given a literal: ds.setPassword("…"), .password("…"), withApiKey("…"); not
# keyring.get_password("svc", …).
SETTER = (
    r"(?:(?<=\.)(?:(?i:set|with|use)_?[A-Za-z]{0,30}?)?|(?<![\w.])(?i:set|with|use)_?[A-Za-z]{0,30}?)"
    + SECRET_NAME_END
    + r"\([ \t]*(?P<s>"
    + QUOTED
    + r")[ \t]*[,)]"
)
# A user and a password handed to code: requests' auth=("u", "p"), HTTPBasicAuth("u", "p"), NetworkCredential…
# The name is read from its start (a run of word characters is not tried again at each of its letters).
AUTH_PAIR = (
    r"(?:(?<![\w.])auth[ \t]*=[ \t]*[(\[]|(?i:(?<!\w)\w{0,60}auth|(?<!\w)\w{0,60}credentials?(?:\.create)?)\()"
    r"[ \t]*(?:" + QUOTED + r")[ \t]*,[ \t]*(?P<s>" + QUOTED + r")[ \t]*[)\]]"
)
# A secret's name as a literal, then its value: config.set("db", "password", "…"), put("api_token", "…"),
# Playwright's fill("#password", "…"), Selenium's find_element(By.ID, "password").send_keys("…"). The value
# holds no blank (a label or a message does), is not a name itself ("password", "confirm_password") and
# is no JSON key ({"name": "DB_PASSWORD", "value": …}).
CALL_WITH_NAME = (
    r"[\"'][#\w.\[\]=-]{0,40}?"
    + SECRET_NAME_END
    + r"[\]\w]{0,2}[\"'][ \t]*(?:,|\)\.(?:send_keys|sendKeys|type|fill)\()"
    r"[ \t]*(?![\"'][\w-]*(?i:pass|pwd|secret|token|key)\w*[\"'])"
    r"(?P<s>\"[^\s\"\\]{3,200}\"|'[^\s'\\]{3,200}')(?![ \t]*:)"
)
# A Markdown table row: | DB_PASSWORD | … |
TABLE_ROW = r"\|[ \t]*`?" + SECRET_NAME + r"`?[ \t]*\|[ \t]*`?" + TYPED + r"`?[ \t]*\|"
# A cookie set in code: cookies[:remember_token] = "…", cookies.signed["sid"] = "…", when it looks random.
COOKIE_JAR = r"(?i:cookies?)(?:\.\w+)?\[[^\]\n]{1,60}\][ \t]*=[ \t]*" + WEAK_VALUE
# A word for a password, in English and the languages a team may write notes in.
PASSWORD_WORD = (
    r"(?i:password|passphrase|passwd|passcode|pwd|pw|pass|psk|mot[ \t]+de[ \t]+passe|passwort|kennwort"
    r"|contrase\u00f1a|contrasena|senha|wachtwoord|parola|l\u00f6senord|salasana|has\u0142o)"
)
SECRET_WORD = r"(?:" + PASSWORD_WORD + r"|(?i:creds?|credentials?|secret|token|key))"
# What says "this is its value" in a note: a colon, an arrow or a verb (is, was, lautet…).
SIGN = (
    r"(?:[ \t]{0,8}(?::|->|=>|\u2192)[ \t]{0,8}|'s[ \t]{1,8}"
    r"|[ \t]{1,8}(?i:is|was|are|to|lautet|ist|est|es|era|now)[ \t]{1,8}(?:(?i:now|still|just|literally)[ \t]{1,8})?)"
)
USER_BEFORE = r"(?:[\w.@\\-]{1,64}[ \t]{0,8}[/:][ \t]{0,8})?"  # "creds: admin / …", "Cred: svc_etl:…"
# Prose: "the prod db password is …", "the key they mailed us is …", "pw: …", "mot de passe : …"; a
# word for a password may also be followed by its value at once ("login admin, password …", "password (…)").
PROSE_SECRET = (
    r"(?<![A-Za-z])(?:"
    + SECRET_WORD
    + r"(?![\w-])[^\n=(){}\[\]:\"'`<>]{0,32}?"
    + SIGN
    + "|"
    + PASSWORD_WORD
    + r"[ \t]{1,8}\(?)"
    + USER_BEFORE
    + TYPED
)

# (marker, pattern): each has a group ``s``, the secret; the rest of the match stays.
NAMED_VALUES = [
    # Assignments: .env, shell, INI, TOML, properties, connection strings, code, --flag=value.
    ("=", ASSIGNMENT),
    ("=", r"(?<![\w.-])_auth[ \t]*=[ \t]*(?P<s>[^\s\"']+)"),  # .npmrc
    ("define", r"define\([ \t]*[\"']" + SECRET_NAME + r"[\"'][ \t]*,[ \t]*" + SECRET),  # PHP
    # YAML, at a line's start: the rest of the line.
    (":", r"(?m)^[ \t]*(?:-[ \t]+)?[\"']?" + KEY + r"[\"']?[ \t]*:[ \t]*" + SECRET_TO_LINE_END),
    # Anywhere else: JSON and dicts, Go and JS fields, a note that says "password: hunter2hunter2".
    (":", KEY + r"[\"']?[ \t]*:[ \t]*" + SECRET_IN_PROSE),
    ('"auth"', r"\"auth\"[ \t]*:[ \t]*\"(?P<s>[^\"\n]+)\""),  # Docker config.json
    # HTTP headers: Authorization keeps its scheme (Basic, Token, …); cookies and API key headers go whole.
    ("authorization", r"(?i:(?:proxy-)?authorization)" + HEADER_SEPARATOR + SCHEME + NOT_A_VALUE + HEADER_SECRET),
    ("cookie", r"(?<![\w-])(?i:(?:set-)?cookie)" + HEADER_SEPARATOR + HEADER_SECRET),
    (
        "-",
        r"(?<![\w-])(?i:(?:x|api|private|ocp-apim-subscription|aeg)-[\w-]{0,40}?(?:key|token|secret|auth))"
        + HEADER_SEPARATOR
        + HEADER_SECRET,
    ),
    # XML: <password>…</password>, <add key="ApiKey" value="…"/>.
    ("</", r"<(?P<tag>" + SECRET_NAME + r")(?:[ \t][^<>\n]{0,200})?>(?P<s>[^<\n]+)</(?P=tag)>"),
    ("value=", r"key=[\"']" + SECRET_NAME + r"[\"'][ \t]+value=[\"'](?P<s>[^\"'\n]+)[\"']"),
    # Command lines and config files where a space comes before the secret.
    ("--", r"(?<![\w-])--" + SECRET_NAME + r"[ \t]+(?!-)" + SECRET),  # --password SECRET
    ("sshpass", r"sshpass[ \t]+-p[ \t]*" + SECRET),
    ("pass:", r"-pass(?:in|out)?[ \t]+pass:(?P<s>\S+)"),  # openssl
    ("pass", r"-(?:src|dest)?(?:store|key)pass[ \t]+" + SECRET),  # keytool, jarsigner
    ("password", r"(?i:password)[ \t]+(?P<s>'[^'\n]+')"),  # SQL: WITH PASSWORD 'x'
    ("requirepass", r"(?m)^[ \t]*requirepass[ \t]+(?P<s>\S+)"),  # redis.conf
    ("masterauth", r"(?m)^[ \t]*masterauth[ \t]+(?P<s>\S+)"),
    ("", CALL_WITH_NAME),
    ("|", TABLE_ROW),
    ("cookie", COOKIE_JAR),
    ("(", SETTER),
    ("(", AUTH_PAIR),
    ("", PROSE_SECRET),
    ("name", VALUE_THEN_NAME),
    ("", WEAK_ASSIGNMENT),
]
