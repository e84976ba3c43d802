/*
 * tty.c - the terminal under `prof top` (see include/prof/top.h): raw
 * mode, the alternate screen, the size, keys, painting, and putting the
 * terminal back however prof leaves.
 *
 * Design notes / invariants:
 *  - One terminal per process: the saved termios and the flags are
 *    globals because signal handlers need them.  Handlers only call
 *    async-signal-safe functions (tcsetattr, write, signal, raise).
 *  - Stop signals (INT, TERM, HUP, QUIT) set a flag the loop polls; the
 *    loop then restores the terminal through prof_tty_close().  Fatal
 *    signals (SEGV, BUS, ABRT, FPE) restore and re-raise, so a crash never
 *    leaves a raw terminal.  Ctrl-Z (TSTP) restores, stops, and on
 *    continue re-enters raw mode and asks for a full redraw.
 *  - SIGPIPE is ignored: a closed terminal shows up as EPIPE/EIO from
 *    write(), which prof_tty_paint returns, and the loop ends.
 *  - ISIG stays on (Ctrl-C still sends SIGINT); only echo and line
 *    buffering are turned off.
 */
#include "prof/top.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define ENTER_SCREEN "\033[?1049h\033[?25l\033[H\033[2J"
#define LEAVE_SCREEN "\033[m\033[?25h\033[?1049l"

static struct termios saved;
static volatile sig_atomic_t active, stopped, resized;

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
static const int fatal_signals[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE };

static void restore_now(void)
{
	if (!active)
		return;
	tcsetattr(0, TCSAFLUSH, &saved);
	if (write(1, LEAVE_SCREEN, sizeof(LEAVE_SCREEN) - 1) < 0)
		return;	/* the terminal is gone: nothing left to restore */
}

static int enter_raw(void)
{
	struct termios raw = saved;

	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | IEXTEN);
	raw.c_iflag &= ~(tcflag_t)(IXON | ICRNL);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(0, TCSAFLUSH, &raw) < 0)
		return -errno;
	return write_all(1, ENTER_SCREEN, sizeof(ENTER_SCREEN) - 1) < 0 ? -EIO : 0;
}

static void on_stop(int sig)
{
	stopped = sig;
}

static void on_winch(int sig)
{
	resized = 1;
}

static void on_fatal(int sig)
{
	restore_now();
	active = 0;
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_tstp(int sig);

static void on_cont(int sig)
{
	signal(SIGTSTP, on_tstp);
	if (enter_raw() == 0)
		active = 1;
	resized = 1;	/* repaint everything */
}

static void on_tstp(int sig)
{
	restore_now();
	active = 0;
	signal(SIGTSTP, SIG_DFL);
	raise(SIGTSTP);	/* stops here until SIGCONT (then on_cont runs) */
}

static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = fn;
	sa.sa_flags = flags;	/* no SA_RESTART: the loop's poll wakes up */
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int prof_tty_open(void)
{
	if (!isatty(0) || !isatty(1))
		return -ENOTTY;
	if (tcgetattr(0, &saved) < 0)
		return -errno;
	stopped = 0;
	resized = 0;
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < ARRAY_SIZE(stop_signals); i++)
		handle(stop_signals[i], on_stop, 0);
	for (size_t i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		handle(fatal_signals[i], on_fatal, SA_RESETHAND);
	handle(SIGWINCH, on_winch, 0);
	handle(SIGTSTP, on_tstp, 0);
	handle(SIGCONT, on_cont, 0);
	int ret = enter_raw();
	active = 1;
	if (ret < 0)
		prof_tty_close();
	return ret;
}

void prof_tty_close(void)
{
	signal(SIGTSTP, SIG_DFL);
	signal(SIGCONT, SIG_DFL);
	restore_now();
	active = 0;
	for (size_t i = 0; i < ARRAY_SIZE(fatal_signals); i++)
		signal(fatal_signals[i], SIG_DFL);
}

bool prof_tty_resized(void) { return resized; }
bool prof_tty_stopped(void) { return stopped; }

void prof_tty_size(int *width, int *height)
{
	struct winsize ws;

	resized = 0;
	if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		*width = ws.ws_col;
		*height = ws.ws_row;
	} else {
		*width = 80;
		*height = 24;
	}
}

static int read_byte(int timeout_ms)
{
	struct pollfd pfd = { 0, POLLIN, 0 };
	unsigned char c;

	if (poll(&pfd, 1, timeout_ms) <= 0 || read(0, &c, 1) != 1)
		return -1;
	return c;
}

/* ESC [ A/B/C/D, ESC [ 5~ / 6~; a lone ESC is Esc. */
static int escape_sequence(void)
{
	int c = read_byte(30);

	if (c != '[' && c != 'O')
		return PROF_TOP_KEY_ESC;
	switch (c = read_byte(30)) {
	case 'A': return PROF_TOP_KEY_UP;
	case 'B': return PROF_TOP_KEY_DOWN;
	case 'D': return PROF_TOP_KEY_LEFT;
	case '5': case '6':
		read_byte(30);	/* the '~' */
		return c == '5' ? PROF_TOP_KEY_PGUP : PROF_TOP_KEY_PGDN;
	default: return -1;	/* a sequence we do not use */
	}
}

int prof_tty_key(int timeout_ms)
{
	int c = read_byte(timeout_ms);

	if (c == 0x1b)
		return escape_sequence();
	if (c == '\n')
		return PROF_TOP_KEY_ENTER;
	if (c == 0x08)
		return PROF_TOP_KEY_BACKSPACE;
	return c;
}

int prof_tty_paint(const char *lines, int selected)
{
	struct strbuf sb = STRBUF_INIT;
	int line = 0, ret;

	sb_adds(&sb, "\033[H");
	for (const char *p = lines;; line++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (line == selected)
			sb_adds(&sb, "\033[7m");
		sb_add(&sb, p, n);
		/* the selected bar spans the width; \033[K clears the rest */
		sb_adds(&sb, line == selected ? "\033[K\033[m" : "\033[K");
		if (!nl)
			break;
		sb_adds(&sb, "\r\n");
		p = nl + 1;
	}
	ret = write_all(1, sb.buf, sb.len);
	sb_release(&sb);
	return ret < 0 ? (errno == EPIPE ? -EPIPE : -EIO) : 0;
}
