#!/usr/bin/perl
# compare-annotate.pl - parity check between `prof callgrind annotate
# --format=json` and callgrind_annotate 3.19 for ONE part.
#
#   compare-annotate.pl PROF.json PART_NUMBER ANNOTATE.txt
#
# ANNOTATE.txt is `callgrind_annotate --threshold=100 --show-percs=no
# --auto=no FILE` of a single-part file.  Every row callgrind_annotate
# prints must be in prof's part with the same self cost for every event
# ("." = 0), and every prof row with a non-zero self cost must be among
# callgrind_annotate's rows.  Prints "rows N" and exits 0 on parity;
# prints each mismatch and exits 1 otherwise.
use strict;
use warnings;
use JSON::PP;

my ($json_file, $part_no, $ann_file) = @ARGV;
die "usage: $0 PROF.json PART ANNOTATE.txt\n" unless defined $ann_file;

sub slurp { local $/; open(my $f, '<', $_[0]) or die "cannot open $_[0]: $!\n"; my $s = <$f>; close $f; $s }

my $doc = decode_json(slurp($json_file));
my ($part) = grep { $_->{part} == $part_no } @{ $doc->{parts} };
die "part $part_no not in $json_file\n" unless $part;
my @events = @{ $part->{events} };
my %ours;
for my $f (@{ $part->{functions} }) {
	$ours{"$f->{file}:$f->{function}"} = [ map { $f->{self}{$_} } @events ];
}

my @lines = split /\n/, slurp($ann_file);
my $i = 0;
$i++ while $i < @lines && $lines[$i] !~ /\sfile:function$/;
die "no function table in $ann_file\n" if $i >= @lines;
$i += 2;	# header and the dashes under it
my ($rows, $bad) = (0, 0);
my %seen;
for (; $i < @lines && $lines[$i] ne ''; $i++) {
	my $rest = $lines[$i];
	my @theirs;
	for (1 .. @events) {
		$rest =~ s/^\s*(\S+) // or die "cannot parse row: $lines[$i]\n";
		(my $n = $1) =~ s/,//g;
		push @theirs, $n eq '.' ? 0 : $n;
	}
	$rest =~ s/^ //;
	my $key = $rest;
	if (!exists $ours{$key} && $rest =~ /^(.*) \[[^\]]*\]$/ && exists $ours{$1}) {
		$key = $1;
	}
	$rows++;
	if (!exists $ours{$key}) {
		print "missing in prof: $rest (@theirs)\n";
		$bad++;
		next;
	}
	$seen{$key} = 1;
	my $o = $ours{$key};
	for my $e (0 .. $#events) {
		if (($o->[$e] // 0) != $theirs[$e]) {
			print "differs: $key $events[$e]: prof $o->[$e], callgrind_annotate $theirs[$e]\n";
			$bad++;
		}
	}
}
for my $k (sort keys %ours) {
	next if $seen{$k};
	next unless grep { $_ } @{ $ours{$k} };
	print "extra in prof: $k (@{ $ours{$k} })\n";
	$bad++;
}
print "rows $rows, mismatches $bad\n";
exit($bad ? 1 : 0);
