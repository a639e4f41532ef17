#!/usr/bin/env python3
"""A real SMTP server (aiosmtpd) for jobsight's tests and for trying notify by hand.

Every message it accepts becomes one file in DIR: the envelope as `X-Envelope-From` and
`X-Envelope-To` lines, then the message exactly as received. With --accept N it accepts N
messages, then refuses the rest with a temporary error and exits: a server that goes down in the
middle of a run, at a known point.
"""
import argparse
import asyncio
import os
import time

from aiosmtpd.controller import Controller


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


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--accept", type=int, default=None)
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    stopped = asyncio.Event()
    controller = Controller(
        Sink(args.dir, args.accept, stopped, asyncio.get_running_loop()), hostname="127.0.0.1", port=args.port
    )
    controller.start()
    print(f"smtp sink on 127.0.0.1:{args.port}, messages into {args.dir}", flush=True)
    try:
        await stopped.wait()
    finally:
        controller.stop()


if __name__ == "__main__":
    asyncio.run(main())
