// Phalanx language for ANTLR 4.13.2: the same language as grammar/phalanx.lark (a conformance test,
// tests/grammar/test_conformance.py, keeps the two equal). The reference is docs/language.md.
// `make antlr` (grammar/tools/generate_antlr.sh) generates the Python3 parser into grammar/_antlr/.
//
// Every decision is LL(1), so a syntax error is reported at the first token that cannot continue
// the program -- the token lark's LALR(1) parser stops at too.
//
// lark lexes by context (its contextual lexer): a keyword is reserved only at the start of a
// statement, where it begins a declaration; anywhere a name is expected a keyword is just a name
// (`processors on(4)`, `stages = A`). Here the lexer always makes keyword tokens and the rules
// `name` and `stmtName` take them back as names exactly where lark's lexer would see a NAME.

grammar Phalanx;

// ---- parser -------------------------------------------------------------------------------------

// `statement? (NL statement?)*` is lark's `_NL* (statement _NL+)* statement?` written LL(1).
program        : statement? (NL statement?)* EOF ;

statement      : targetDecl
               | processorsDecl
               | arrayDecl
               | computeStmt
               | assignStmt
               | pipelineStmt
               | repeatStmt
               ;

targetDecl     : TARGET targetSpec ;
// lark's TARGET_SPEC without a ':' part is a name that starts with a letter: not UNAME.
targetSpec     : TARGET_SPEC | NAME | keyword ;
processorsDecl : PROCESSORS name LPAREN intList RPAREN (AT INT)? ;
arrayDecl      : ARRAY name LPAREN intList RPAREN OF name mapping ;
mapping        : DISTRIBUTE distSpec ONTO name                  # distributed
               | REPLICATED ONTO name                           # replicated
               | ON name LPAREN intList RPAREN                  # singleOwner
               ;
distSpec       : LPAREN dimDist (COMMA dimDist)* RPAREN         # distList
               | dimDist                                        # distSingle
               ;
dimDist        : name (LPAREN INT RPAREN)?                      # distNamed
               | STAR                                           # distStar
               ;
computeStmt    : COMPUTE STRING ON name COST number name ;
// A destination with subscripts is an array section: `B(:, 0:63) = A(:, 64:127)`.
assignStmt     : stmtName (LPAREN callArgs RPAREN)? EQUAL expr ;
// `name(...)` is a call or an array section; the checker tells them apart by the name.
expr           : name (LPAREN callArgs RPAREN)? ;               // a name, or a call when '(' follows
callArgs       : callArg (COMMA callArg)* ;
callArg        : name (EQUAL signedInt | LPAREN callArgs RPAREN)?   # argNameKeywordOrCall
               | signedInt (COLON bound (COLON signedInt)?)?        # argIntOrTriplet
               | COLON bound (COLON signedInt)?                     # argTriplet
               ;
bound          : signedInt? ;                                   // a triplet's upper bound, or none
pipelineStmt   : PIPELINE STAGES EQUAL INT body ;
repeatStmt     : REPEAT INT body ;
body           : LBRACE statement? (NL statement?)* RBRACE ;
intList        : INT (COMMA INT)* ;

number         : INT | NUMBER ;                                 // lark's NUMBER
signedInt      : INT | SIGNED_INT ;                             // lark's SIGNED_INT

name           : NAME | UNAME | keyword ;
// At the start of a statement the six statement keywords are reserved (lark's lexer sees both).
stmtName       : NAME | UNAME | OF | DISTRIBUTE | REPLICATED | ONTO | ON | COST | STAGES | AT ;
keyword        : TARGET | PROCESSORS | ARRAY | OF | DISTRIBUTE | REPLICATED | ONTO | ON
               | COMPUTE | COST | PIPELINE | STAGES | REPEAT | AT ;

// ---- lexer --------------------------------------------------------------------------------------
// Keywords come first: on a tie in length the first rule wins, so `on` is ON and `onto` is ONTO.

TARGET         : 'target' ;
PROCESSORS     : 'processors' ;
ARRAY          : 'array' ;
OF             : 'of' ;
DISTRIBUTE     : 'distribute' ;
REPLICATED     : 'replicated' ;
ONTO           : 'onto' ;
ON             : 'on' ;
COMPUTE        : 'compute' ;
COST           : 'cost' ;
PIPELINE       : 'pipeline' ;
STAGES         : 'stages' ;
REPEAT         : 'repeat' ;
AT             : 'at' ;

// Only the ':' form: without it a target spec is a NAME (see targetSpec).
TARGET_SPEC    : [A-Za-z] [A-Za-z0-9_]* ':' [A-Za-z0-9_.=,:\-]+ ;
NAME           : [A-Za-z] [A-Za-z0-9_]* ;
UNAME          : '_' [A-Za-z0-9_]* ;                            // a name that cannot be a target spec
INT            : [0-9]+ ;                                       // before NUMBER: plain digits are INT
NUMBER         : [0-9]+ ('.' [0-9]+)? ([eE] [+-]? [0-9]+)? ;
SIGNED_INT     : [+-] [0-9]+ ;                                  // unsigned digits are INT
STRING         : '"' ~["\n]* '"' ;

LPAREN         : '(' ;
RPAREN         : ')' ;
LBRACE         : '{' ;
RBRACE         : '}' ;
COMMA          : ',' ;
COLON          : ':' ;
EQUAL          : '=' ;
STAR           : '*' ;

NL             : '\r'? '\n' ;
WS             : [ \t]+ -> skip ;
COMMENT        : [#!] ~[\n]* -> skip ;

// Any other character becomes a token no rule takes, so the parser reports it at its place, in
// reading order with the syntax errors before it, as lark's "unexpected character" (and the lexer
// itself never reports anything).
ERROR_CHAR     : . ;
