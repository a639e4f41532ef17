#!/usr/bin/env python3
"""A real SMTP server (aiosmtpd) for jobsight's tests and for trying notify by hand.

Every message it accepts becomes one file in DIR: the envelope as `X-Envelope-From` and
`X-Envelope-To` lines, then the message exactly as received. With --accept N it accepts N
messages, then refuses the rest with a temporary error and exits: a server that goes down in the
middle of a run, at a known point. With --tls-cert/--tls-key it requires STARTTLS
(--tls-mode starttls) or speaks TLS from the first byte (--tls-mode implicit); with
--auth USER:PASSWORD it requires that login (over TLS only).
"""
import argparse
import asyncio
import os
import ssl
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class Sink:
    def __init__(self, directory, accept, stopped, main_loop):
        self.main_loop = main_loop
        self.directory = directory
        self.accept = accept
        self.count = 0
        self.stopped = stopped

    async def handle_DATA(self, server, session, envelope):
        if self.accept is not None and self.count >= self.accept:
            return "421 4.3.0 shutting down"
        self.count += 1
        name = f"{time.time_ns()}-{self.count}.eml"
        tmp = os.path.join(self.directory, "." + name)
        with open(tmp, "wb") as f:
            f.write(f"X-Envelope-From: {envelope.mail_from}\r\n".encode())
            for rcpt in envelope.rcpt_tos:
                f.write(f"X-Envelope-To: {rcpt}\r\n".encode())
            f.write(envelope.original_content or envelope.content)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, os.path.join(self.directory, name))
        if self.accept is not None and self.count >= self.accept:
            # Answer this one, then go away. The controller serves from its own thread and loop.
            self.main_loop.call_soon_threadsafe(
                lambda: self.main_loop.call_later(0.3, self.stopped.set)
            )
        return "250 OK"


class Login:
    def __init__(self, user, password):
        self.user = user.encode()
        self.password = password.encode()

    def __call__(self, server, session, envelope, mechanism, auth_data):
        ok = (
            isinstance(auth_data, LoginPassword)
            and auth_data.login == self.user
            and auth_data.password == self.password
        )
        return AuthResult(success=ok, handled=False)


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--accept", type=int, default=None)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--tls-mode", choices=["starttls", "implicit"], default="starttls")
    parser.add_argument("--auth", help="USER:PASSWORD required")
    args = parser.parse_args()
    options = {}
    if args.tls_cert:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_mode == "starttls":
            options.update(tls_context=context, require_starttls=True)
        else:
            options.update(ssl_context=context)
    if args.auth:
        user, password = args.auth.split(":", 1)
        # aiosmtpd only counts STARTTLS as TLS for auth_require_tls; an implicit-TLS connection
        # is encrypted from the first byte, so login is allowed there too.
        options.update(
            authenticator=Login(user, password),
            auth_require_tls=args.tls_mode == "starttls" or not args.tls_cert,
        )
    os.makedirs(args.dir, exist_ok=True)
    stopped = asyncio.Event()
    controller = Controller(
        Sink(args.dir, args.accept, stopped, asyncio.get_running_loop()),
        hostname="127.0.0.1",
        port=args.port,
        **options,
    )
    controller.start()
    print(f"smtp sink on 127.0.0.1:{args.port}, messages into {args.dir}", flush=True)
    try:
        await stopped.wait()
    finally:
        controller.stop()


if __name__ == "__main__":
    asyncio.run(main())
