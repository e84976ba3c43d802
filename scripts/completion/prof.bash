# bash completion for prof(1).  The flags come from 'prof CMD --help', so
# they follow the installed prof; values are completed for --format,
# --sort (comma lists), --metric, --call-graph, -p/--pid and -t/--tid
# (running processes), -i/--input and -o/--output (files), after a space
# or an '=' (--metric=<TAB>), with or without the bash-completion package.

_prof_flags()
{
	prof "$@" --help 2>/dev/null | grep -oE -- '(^|[ ,])--?[a-zA-Z][-a-zA-Z]*' |
		sed 's/^[ ,]*//' | sort -u
}

_prof()
{
	local cur prev words cword cmd i
	_init_completion -n =, 2>/dev/null || {
		cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
	}
	cmd=
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "record report stat diff callgrind crosscheck top annotate help --help --version" -- "$cur"))
		return
	fi
	case $cmd in
	help) COMPREPLY=($(compgen -W "record report stat diff callgrind crosscheck top annotate" -- "$cur")); return ;;
	esac
	# --flag=VALUE: plain bash splits the word at '=' (COMP_WORDBREAKS), so
	# the flag is one or two words back; bash-completion's -n = keeps it
	# in the word.  Either way the value alone is completed.
	if [[ $cur == = ]]; then
		prev=${words[cword-1]}; cur=
	elif [[ $prev == = && $cword -ge 2 ]]; then
		prev=${words[cword-2]}
	elif [[ $cur == --*=* ]]; then
		prev=${cur%%=*}; cur=${cur#*=}
	fi
	case $prev in
	--format)
		if [[ $cmd == report ]]; then
			COMPREPLY=($(compgen -W "text folded json flamegraph html speedscope pprof callgrind firefox" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "text json" -- "$cur"))
		fi
		return ;;
	--sort)
		local done=${cur%${cur##*,}} last=${cur##*,}
		COMPREPLY=($(compgen -P "$done" -W "self total comm pid tid dso sym srcline" -- "$last"))
		compopt -o nospace 2>/dev/null
		return ;;
	--metric) COMPREPLY=($(compgen -W "cpu off-cpu io-wait sleep wall" -- "$cur")); return ;;
	--call-graph|-g)
		if [[ $cmd == report ]]; then
			COMPREPLY=($(compgen -W "caller callee none" -- "$cur"))
		elif [[ $prev == --call-graph ]]; then
			COMPREPLY=($(compgen -W "dwarf fp none" -- "$cur"))
		fi
		return ;;
	-p|--pid|-t|--tid)
		COMPREPLY=($(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur")); return ;;
	-i|--input|-o|--output|--baseline|--save-baseline|--callgrind-base|--callgrind-head)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	if [[ $cur == -* ]]; then
		if [[ $cmd == callgrind && -n ${words[i+1]} && $((i + 1)) -lt $cword ]]; then
			COMPREPLY=($(compgen -W "$(_prof_flags callgrind)" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$(_prof_flags "$cmd")" -- "$cur"))
		fi
		return
	fi
	if [[ $cmd == callgrind && $((i + 1)) -eq $cword ]]; then
		COMPREPLY=($(compgen -W "annotate run diff" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _prof prof
